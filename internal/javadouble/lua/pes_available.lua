-- pes_available.lua: Redisson PermitExpirableSemaphore availablePermits (reference §10): reclaims
-- the expired permits first.
--
-- KEYS[1]  the available-permit count
-- KEYS[2]  the timeout ZSET
-- KEYS[3]  the channel redisson_sc:{name}
-- ARGV[1]  now, client clock in ms
-- ARGV[2]  publish command
--
-- returns  the available permits after the reclaim (0 if no key)
--
-- Safe to run twice: a reclaimed permit is gone from the ZSET.
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1])
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  local value = redis.call('incrby', KEYS[1], #expired)
  if value > 0 then
    redis.call(ARGV[2], KEYS[3], value)
  end
end
local value = redis.call('get', KEYS[1])
if value == false then
  return 0
end
return tonumber(value)
