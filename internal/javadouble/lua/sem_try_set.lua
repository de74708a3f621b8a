-- sem_try_set.lua: Redisson Semaphore / PermitExpirableSemaphore trySetPermits(n) (reference §9, §10).
--
-- KEYS[1]  the permit count
-- KEYS[2]  the channel redisson_sc:{name}
-- ARGV[1]  n
-- ARGV[2]  publish command
--
-- returns  1 set (n published), 0 the key existed (unchanged)
--
-- Safe to run twice: the second run finds the key.
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[1], ARGV[1])
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
