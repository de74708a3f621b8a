-- lock_force_unlock.lua: delete a lock whoever holds it; if waiters are queued, hand it to the first
-- live one as a release would. Formats: lock_value.lua, wait_queue.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  a key of this request's own, where its outcome is recorded
-- KEYS[3]  wait queue: order (q)
-- KEYS[4]  wait queue: deadlines (qt)
-- KEYS[5]  fencing counter (FencedLock; any key of the lock's slot otherwise)
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  request id (unique per call)
-- ARGV[3]  how long, in milliseconds, the outcome is kept (the re-send window)
-- ARGV[4]  wake channel prefix (see lock_release.lua)
-- ARGV[5]  kind: "", "f" or "t" (see lock_acquire.lua)
--
-- returns  1 if a held lock was deleted, 0 if there was none
--
-- Safe to run twice: the outcome is recorded under the request, and a repeat answers it without
-- deleting again (so it cannot delete the lock of whoever acquired it since).
-- A key of another type, a string in another format, or a lock of another kind is refused with
-- WRONGTYPE and left untouched.
local key, record, q, qt, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local publish, req, historyMs, wakePrefix, kind = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

local done = history_outcome(record, req)
if done then
  return done == 'f' and 1 or 0
end
local cur = redis.call('GET', key)
if not cur then
  history_push(record, req, 'n', historyMs)
  return 0
end
local holder, _, mark, vkind = lock_decode(cur)
if not holder or vkind ~= kind then
  return wrong_type()
end
redis.call('DEL', key)
lock_hand_over(key, q, qt, fence, kind, publish, wakePrefix, mark_epoch(mark))
history_push(record, req, 'f', historyMs)
return 1
