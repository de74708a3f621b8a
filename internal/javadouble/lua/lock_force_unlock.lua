-- lock_force_unlock.lua: Redisson RLock forceUnlock (reference §1.4); the write lock uses
-- rw_write_force_unlock.lua, the read lock rw_read_force_unlock.lua.
--
-- KEYS[1]  the lock HASH
-- KEYS[2]  the lock channel
-- ARGV[1]  the unlock message (0)
-- ARGV[2]  publish command
--
-- returns  1 the key existed and was deleted (message published), 0 nothing deleted
--
-- Safe to run twice: the second run finds no key and returns 0.
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
