-- lock_force_unlock.lua: delete a lock whoever holds it and wake a waiter. Formats: lock_value.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  wake-up channel of the lock
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
--
-- returns  1 if a held lock was deleted, 0 if there was none
--
-- Safe to run twice: the repeat finds nothing to delete and returns 0 (a repeat that finds a new
-- holder deletes it too: force unlocking is not owner-aware by nature).
-- A key of another type, or a string in another format, is refused with WRONGTYPE and left untouched.
local cur = redis.call('GET', KEYS[1])
if not cur then
  return 0
end
if not lock_decode(cur) then
  return wrong_type()
end
redis.call('DEL', KEYS[1])
redis.call(ARGV[1], KEYS[2], '0')
return 1
