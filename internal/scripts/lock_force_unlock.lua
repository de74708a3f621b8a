-- lock_force_unlock.lua: delete a lock whoever holds it and wake a waiter. Formats: lock_value.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  wake-up channel of the lock
-- KEYS[3]  release history of the lock
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  request id (unique per call)
-- ARGV[3]  how long, in milliseconds, the history keeps the outcome (the re-send window)
--
-- returns  1 if a held lock was deleted, 0 if there was none
--
-- Safe to run twice: the outcome is recorded in the history under the request id, and a repeat
-- answers it without deleting again (so it cannot delete the lock of whoever acquired it since). The
-- deleted owner is recorded as force-unlocked, so its own release can say so.
-- A key of another type, or a string in another format, is refused with WRONGTYPE and left untouched.
local key, channel, history = KEYS[1], KEYS[2], KEYS[3]
local publish, req, historyMs = ARGV[1], ARGV[2], ARGV[3]

local done = history_outcome(history, req)
if done then
  return done == 'f' and 1 or 0
end
local cur = redis.call('GET', key)
if not cur then
  history_push(history, req, 'n', historyMs)
  return 0
end
local holder = lock_decode(cur)
if not holder then
  return wrong_type()
end
redis.call('DEL', key)
redis.call(publish, channel, '0')
history_push(history, req, 'f', historyMs)
history_push(history, holder, 'f', historyMs)
return 1
