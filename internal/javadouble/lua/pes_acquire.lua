-- pes_acquire.lua: Redisson PermitExpirableSemaphore acquire (reference §10).
--
-- KEYS[1]  the available-permit count (STRING integer)
-- KEYS[2]  the timeout ZSET {name}:timeout: raw 16-byte permit id -> expiry (ms, client clock)
-- KEYS[3]  the channel redisson_sc:{name}
-- ARGV[1]  n, permits to take
-- ARGV[2]  the expiry score of the new permits (922337203685477 for non-expiring ones)
-- ARGV[3]  now, client clock in ms
-- ARGV[4]  publish command
-- ARGV[5..4+n]  the new permit ids (raw bytes)
--
-- returns  "OK" taken; ":<ms>" not taken, the expiry of the earliest expiring permit; nil not taken
--          and no permit will expire
--
-- Not safe to run twice with new ids (takes more permits); with the same ids a repeat would add
-- duplicates to the count only; sent without retry.
local n, now = tonumber(ARGV[1]), tonumber(ARGV[3])
local expired = redis.call('zrangebyscore', KEYS[2], 0, now, 'limit', 0, n)
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  local value = redis.call('incrby', KEYS[1], #expired)
  if value > 0 then
    redis.call(ARGV[4], KEYS[3], value)
  end
end
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= n then
  redis.call('decrby', KEYS[1], n)
  for i = 5, 4 + n do
    redis.call('zadd', KEYS[2], ARGV[2], ARGV[i])
  end
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then
    redis.call('pexpire', KEYS[2], ttl)
  end
  return 'OK'
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[1] ~= nil and tonumber(first[2]) < 922337203685477 then
  return ':' .. first[2]
end
return nil
