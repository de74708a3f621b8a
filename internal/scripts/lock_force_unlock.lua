-- lock_force_unlock.lua: delete a lock whoever holds it and wake a waiter. Formats: lock_value.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  wake-up channel of the lock
-- KEYS[3]  a key of this request's own, where its outcome is recorded
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  request id (unique per call)
-- ARGV[3]  how long, in milliseconds, the outcome is kept (the re-send window)
--
-- returns  1 if a held lock was deleted, 0 if there was none
--
-- Safe to run twice: the outcome is recorded under the request, and a repeat answers it without
-- deleting again (so it cannot delete the lock of whoever acquired it since).
-- A key of another type, or a string in another format, is refused with WRONGTYPE and left untouched.
local key, channel, record = KEYS[1], KEYS[2], KEYS[3]
local publish, req, historyMs = ARGV[1], ARGV[2], ARGV[3]

local done = history_outcome(record, req)
if done then
  return done == 'f' and 1 or 0
end
local cur = redis.call('GET', key)
if not cur then
  history_push(record, req, 'n', historyMs)
  return 0
end
if not lock_decode(cur) then
  return wrong_type()
end
redis.call('DEL', key)
redis.call(publish, channel, '0')
history_push(record, req, 'f', historyMs)
return 1
