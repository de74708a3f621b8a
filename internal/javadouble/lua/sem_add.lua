-- sem_add.lua: Redisson Semaphore addPermits(n) (reference §9); with ARGV[3] = "1" the
-- PermitExpirableSemaphore variant, which publishes only a positive count (§10).
--
-- KEYS[1]  the permit count
-- KEYS[2]  the channel redisson_sc:{name}
-- ARGV[1]  n (may be negative)
-- ARGV[2]  publish command
-- ARGV[3]  "1": publish only if the new count is > 0
--
-- returns  the new count
--
-- Not safe to run twice (a repeat adds n more).
local value = redis.call('get', KEYS[1])
if value == false then
  value = 0
end
local new = tonumber(value) + tonumber(ARGV[1])
redis.call('set', KEYS[1], new)
if ARGV[3] ~= '1' or new > 0 then
  redis.call(ARGV[2], KEYS[2], new)
end
return new
