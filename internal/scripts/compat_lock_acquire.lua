-- compat_lock_acquire.lua: acquire or re-enter a Lock in Java Redisson's RLock format (a Client made
-- WithRedissonCompat; format: compat_lock_value.lua), as Redisson's acquisition does: a free lock, or
-- one the owner holds, has the owner's count incremented and its TTL set to the lease; otherwise
-- the answer is the lock's remaining TTL, which bounds the waiter's sleep.
--
-- KEYS[1]  lock key
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to set; 0 keeps the current TTL (re-entry of a fixed-lease hold)
-- ARGV[3]  mode: "f" or "w" a fresh acquisition (there is no queue: both make one attempt); "r"
--          re-entry (the owner holds the lock and wants one more level)
--
-- returns  {n, pttl}:
--          n ≥ 1  acquired: the owner's count is now n (fresh, or re-entered)
--          n = 0  not acquired: held by another owner, whose remaining TTL is pttl ms (-1: no
--                 expiry); or a re-entry by an owner that holds nothing (pttl 0)
--
-- Safe to run twice for a fresh acquisition: owner ids are never reused, so an owner found holding
-- the lock is an earlier copy of this request's doing, and is answered as acquired without counting
-- again. A re-sent re-entry counts again (a count cannot tell): the owner's count may then exceed its
-- levels, which only HoldCount shows, since the owner's final release deletes the lock whatever its
-- count (compat_lock_release.lua). A key of another type, or a hash that is no Redisson lock, is
-- refused with WRONGTYPE before any write.
local key, owner, leaseMs, mode = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]

local holder, count = rl_load(key)
if holder == false then
  return rl_wrong_type()
end
if mode == 'r' then
  if holder ~= owner then
    return {0, 0}
  end
  return {rl_reenter(key, owner, leaseMs), 0}
end
if holder == owner then
  return {count, 0} -- a re-sent copy: the first one acquired
end
if holder == nil then
  redis.call('HINCRBY', key, owner, 1)
  redis.call('PEXPIRE', key, leaseMs)
  return {1, 0}
end
return {0, redis.call('PTTL', key)}
