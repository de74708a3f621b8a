-- rw_force_unlock.lua: Redisson ReadLock / WriteLock forceUnlock (reference §4.6).
--
-- KEYS[1]  the rwlock HASH
-- KEYS[2]  the channel redisson_rwlock:{name}
-- ARGV[1]  the mode this lock object forces: read or write
-- ARGV[2]  the message: 0 for read, 1 for write
-- ARGV[3]  publish command
--
-- returns  1 deleted (the hash was in ARGV[1]'s mode), 0 nothing deleted
--
-- Safe to run twice: the second run finds no hash and returns 0.
if redis.call('hget', KEYS[1], 'mode') == ARGV[1] then
  redis.call('del', KEYS[1])
  redis.call(ARGV[3], KEYS[2], ARGV[2])
  return 1
end
return 0
