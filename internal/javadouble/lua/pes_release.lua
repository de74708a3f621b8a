-- pes_release.lua: Redisson PermitExpirableSemaphore tryRelease(id) (reference §10).
--
-- KEYS[1]  the available-permit count
-- KEYS[2]  the timeout ZSET
-- KEYS[3]  the channel redisson_sc:{name}
-- ARGV[1]  the permit id (raw bytes)
-- ARGV[2]  now, client clock in ms
-- ARGV[3]  publish command
--
-- returns  1 released; 0 no such permit, or it had expired (it is returned to the pool all the same)
--
-- Safe to run twice: the second run finds no permit and returns 0.
local expiry = redis.call('zscore', KEYS[2], ARGV[1])
if expiry == false then
  return 0
end
redis.call('zrem', KEYS[2], ARGV[1])
local value = redis.call('incrby', KEYS[1], 1)
redis.call(ARGV[3], KEYS[3], value)
if tonumber(expiry) <= tonumber(ARGV[2]) then
  return 0
end
return 1
