-- lock_force_unlock.lua: delete a lock whoever holds it; if waiters are queued, hand it to the first
-- live one as a release would. Formats: lock_value.lua, wait_queue.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  wait queue: order (q)
-- KEYS[3]  wait queue: deadlines (qt)
-- KEYS[4]  fencing counter (FencedLock; any key of the lock's slot otherwise)
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  wake channel prefix (see lock_release.lua)
-- ARGV[3]  kind: "", "f" or "t" (see lock_acquire.lua)
--
-- returns  1 if a held lock was deleted, 0 if there was none
--
-- NOT safe to run twice, and it keeps no record: a repeat would delete the lock of whoever acquired
-- it since, and nothing in the lock's state tells a repeat from a new request. The client sends it
-- once after an unknown outcome (no re-send after a lost reply: see Lock.ForceUnlock), and only
-- again after a reply or error proving that it did not run (send.go).
-- A key of another type, a string in another format, or a lock of another kind is refused with
-- WRONGTYPE and left untouched.
local key, q, qt, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local publish, wakePrefix, kind = ARGV[1], ARGV[2], ARGV[3]

local cur = redis.call('GET', key)
if not cur then
  return 0
end
local holder, _, mark, vkind = lock_decode(cur)
if not holder or vkind ~= kind then
  return wrong_type()
end
redis.call('DEL', key)
lock_hand_over(key, q, qt, fence, kind, publish, wakePrefix, mark_epoch(mark))
return 1
