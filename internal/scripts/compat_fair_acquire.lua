-- compat_fair_acquire.lua: acquire or re-enter a FairLock in Java Redisson's RFairLock layout (a
-- Client made WithRedissonCompat; formats: compat_lock_value.lua, compat_fair_queue.lua), as
-- Redisson's acquisition does: purge the stale heads; take the lock if it is free and the queue is
-- empty or the caller heads it (leaving the queue, and moving every remaining deadline one
-- threadWaitTime earlier); otherwise a waiting attempt queues the caller at the tail, with the
-- deadline the tail's plus threadWaitTime (or the lock's TTL plus it, first in line).
--
-- KEYS[1]  lock key (the hash)
-- KEYS[2]  queue "redisson_lock_queue:{<key>}"
-- KEYS[3]  deadlines "redisson_lock_timeout:{<key>}"
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to set; 0 keeps the current TTL (re-entry of a fixed-lease hold)
-- ARGV[3]  mode: "f" one attempt that never queues; "w" a waiting attempt (queues the caller);
--          "r" re-entry (the owner holds the lock and wants one more level)
-- ARGV[4]  threadWaitTime in milliseconds (Redisson's fairLockWaitTimeout, or the wait bound)
-- ARGV[5]  now: the caller's clock, in milliseconds since the epoch
--
-- returns  {n, wait}:
--          n ≥ 1  acquired: the owner's count is now n (fresh, or re-entered)
--          n = 0  not acquired; wait: how long to sleep at most before the next attempt: the
--                 holder's remaining TTL, or for a newly queued waiter Redisson's answer (the time
--                 to the tail's deadline, or the TTL); -1 no bound (held without expiry); -2 the
--                 lock is free but it is another waiter's turn (the head's); 0 for a re-entry by
--                 an owner that holds nothing
--
-- Safe to run twice for a fresh acquisition: owner ids are never reused, so an owner found holding
-- the lock is an earlier copy of this request's doing (answered as acquired without counting again),
-- and an owner found queued is not queued again. A copy that lands after the owner's release may
-- queue it again: the client then undoes it (compat_fair_release.lua leaves the queue). A re-sent
-- re-entry counts again, as compat_lock_acquire.lua's. A key of another type, or a hash that is no
-- Redisson lock, is refused with WRONGTYPE before any write.
local key, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local owner, leaseMs, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local waitMs, now = tonumber(ARGV[4]), tonumber(ARGV[5])

local holder, count = rl_load(key)
if holder == false or not rf_typed(queue, timeouts) then
  return rl_wrong_type()
end
if mode == 'r' then
  if holder ~= owner then
    return {0, 0}
  end
  count = redis.call('HINCRBY', key, owner, 1)
  if leaseMs > 0 then
    redis.call('PEXPIRE', key, leaseMs)
  end
  return {count, 0}
end
if holder == owner then
  return {count, 0} -- a re-sent copy: the first one acquired
end
rf_purge(queue, timeouts, now)
if holder == nil then
  local head = redis.call('LINDEX', queue, 0)
  if head == false or head == owner then
    redis.call('LPOP', queue)
    redis.call('ZREM', timeouts, owner)
    local waiters = redis.call('ZRANGE', timeouts, 0, -1)
    for i = 1, #waiters do
      redis.call('ZINCRBY', timeouts, -waitMs, waiters[i])
    end
    redis.call('HSET', key, owner, 1)
    redis.call('PEXPIRE', key, leaseMs)
    return {1, 0}
  end
end
if mode == 'w' and not redis.call('ZSCORE', timeouts, owner) then
  local base
  local tail = redis.call('LINDEX', queue, -1)
  local tailDeadline = false
  if tail and tail ~= owner then
    tailDeadline = redis.call('ZSCORE', timeouts, tail)
  end
  if tailDeadline then
    base = tonumber(tailDeadline) - now
  else
    base = redis.call('PTTL', key)
  end
  if redis.call('ZADD', timeouts, base + waitMs + now, owner) == 1 then
    redis.call('RPUSH', queue, owner)
  end
  if holder ~= nil then
    if base < 0 then
      base = redis.call('PTTL', key)
    end
    return {0, base}
  end
end
if holder == nil then
  return {0, -2}
end
return {0, redis.call('PTTL', key)}
