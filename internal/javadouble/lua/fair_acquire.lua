-- fair_acquire.lua: Redisson FairLock acquire, waiting variant (reference §3.2).
--
-- KEYS[1]  the lock HASH (owner -> hold count)
-- KEYS[2]  the queue LIST redisson_lock_queue:{name} of waiting owners
-- KEYS[3]  the timeout ZSET redisson_lock_timeout:{name}: owner -> deadline (ms, client clock)
-- ARGV[1]  lease in ms
-- ARGV[2]  owner "<uuid>:<threadId>"
-- ARGV[3]  threadWaitTime in ms (fairLockWaitTimeout, or the tryLock wait time)
-- ARGV[4]  now, the calling client's clock in ms
--
-- returns  nil: acquired (or re-entered); integer: not acquired, the time to sleep at most before the
--          next attempt (the caller is then queued)
--
-- Not safe to run twice (a repeat re-enters); sent without retry, as Redisson does.
local wait, now = tonumber(ARGV[3]), tonumber(ARGV[4])
-- purge the stale heads (only heads)
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if head == false then
    break
  end
  local deadline = tonumber(redis.call('zscore', KEYS[3], head))
  if deadline == nil or deadline > now then
    break
  end
  redis.call('zrem', KEYS[3], head)
  redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0 or
    redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  local waiters = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #waiters do
    redis.call('zincrby', KEYS[3], -wait, waiters[i])
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then
  return math.max(0, redis.call('pttl', KEYS[1]))
end
local base
local tail = redis.call('lindex', KEYS[2], -1)
local tailDeadline = false
if tail ~= false and tail ~= ARGV[2] then
  tailDeadline = redis.call('zscore', KEYS[3], tail)
end
if tailDeadline ~= false then
  base = tonumber(tailDeadline) - now
else
  base = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], base + wait + now, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return base
