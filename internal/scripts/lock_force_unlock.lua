-- lock_force_unlock.lua: delete a lock whoever holds it and wake one waiter.
--
-- KEYS[1]  lock hash
-- KEYS[2]  wake-up channel of the lock
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
--
-- returns  1 if a lock was deleted, 0 if there was none
--
-- Safe to run twice: the repeat finds nothing to delete and returns 0.
-- TYPE is checked first so a key of another type is refused with WRONGTYPE and left untouched.
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then
  return 0
end
if t ~= 'hash' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
redis.call('DEL', KEYS[1])
redis.call(ARGV[1], KEYS[2], '0')
return 1
