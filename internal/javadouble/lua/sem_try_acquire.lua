-- sem_try_acquire.lua: Redisson Semaphore tryAcquire(n) (reference §9).
--
-- KEYS[1]  the permit count (STRING integer)
-- ARGV[1]  n, the permits to take (> 0)
--
-- returns  1 taken (DECRBY n), 0 not enough permits or no key
--
-- Not safe to run twice (a repeat takes n more); sent without retry.
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0
