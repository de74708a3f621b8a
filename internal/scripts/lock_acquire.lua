-- lock_acquire.lua: acquire or re-enter a reentrant lock.
--
-- KEYS[1]  lock hash. Fields: <owner> = hold count, "~req" = id of the last request applied by the holder.
-- ARGV[1]  owner id (client id + sequence; unique per acquisition)
-- ARGV[2]  lease in milliseconds; 0 on re-entry means "keep the current TTL" (fixed-lease holds)
-- ARGV[3]  request id (unique per call)
-- ARGV[4]  "1" to only re-enter: never create the lock (the caller believes it already holds it)
--
-- returns  {1, holdCount}  acquired (fresh or re-entered)
--          {0, pttl}       not acquired: held by another owner (pttl = its remaining TTL in ms, -1: no
--                          expiry), or ARGV[4] is "1" and the owner holds nothing (pttl -2 if free)
--
-- Safe to run twice: a repeat of a request that was already applied ("~req" matches) changes nothing
-- and returns the same answer, so a go-redis re-send after a lost reply cannot count twice.
-- The first command is a type-checked read, so a key of another type fails with WRONGTYPE before any write.
local key = KEYS[1]
local owner, leaseMs, req, reenterOnly = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local state = redis.call('HMGET', key, owner, '~req')
local count = state[1]
if count then
  count = tonumber(count)
  if state[2] ~= req then
    count = count + 1
    redis.call('HSET', key, owner, count, '~req', req)
  end
  if leaseMs > 0 then
    redis.call('PEXPIRE', key, leaseMs)
  end
  return {1, count}
end

local pttl = redis.call('PTTL', key)
if pttl ~= -2 or reenterOnly == '1' then
  return {0, pttl}
end

redis.call('HSET', key, owner, 1, '~req', req)
redis.call('PEXPIRE', key, leaseMs)
return {1, 1}
