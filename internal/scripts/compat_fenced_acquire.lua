-- compat_fenced_acquire.lua: acquire or re-enter a FencedLock in Java Redisson's RFencedLock layout
-- (a Client made WithRedissonCompat): the RLock hash (compat_lock_value.lua), acquired as
-- compat_lock_acquire.lua does, and Redisson's token counter beside it, incremented by every fresh
-- acquisition, whose new value is the holder's fencing token.
--
-- KEYS[1]  lock key
-- KEYS[2]  the token counter: "redisson_lock_token:{<key>}" (a plain integer, never expired)
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to set; 0 keeps the current TTL (re-entry of a fixed-lease hold)
-- ARGV[3]  mode: "f" or "w" a fresh acquisition (one attempt); "r" re-entry
--
-- returns  {n, pttl, token}:
--          n ≥ 1  acquired: the owner's count is now n; token the fencing token of a fresh
--                 acquisition (0 for a re-entry, which keeps the hold's token)
--          n = 0  not acquired: held by another owner, whose remaining TTL is pttl ms (-1: no
--                 expiry); or a re-entry by an owner that holds nothing (pttl 0)
--
-- Redisson's own acquisition increments the counter on re-entries too; this package's re-entry
-- keeps the hold's token and leaves the counter alone, so a token is still strictly greater than
-- every token issued before it, by either side.
--
-- Safe to run twice for a fresh acquisition: owner ids are never reused, so an owner found holding
-- the lock is an earlier copy of this request's doing, answered as acquired without counting again,
-- with the counter's value: nothing can have incremented it since (the owner holds the lock, and
-- only acquisitions do). A re-sent re-entry counts again, as compat_lock_acquire.lua's. A key of
-- another type, or a hash that is no Redisson lock, is refused with WRONGTYPE before any write.
local key, counter = KEYS[1], KEYS[2]
local owner, leaseMs, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local holder, count = rl_load(key)
if holder == false then
  return rl_wrong_type()
end
if mode == 'r' then
  if holder ~= owner then
    return {0, 0, 0}
  end
  return {rl_reenter(key, owner, leaseMs), 0, 0}
end
if holder == owner then
  return {count, 0, tonumber(redis.call('GET', counter) or '0')} -- a re-sent copy
end
if holder == nil then
  local token = redis.call('INCR', counter)
  redis.call('HINCRBY', key, owner, 1)
  redis.call('PEXPIRE', key, leaseMs)
  return {1, 0, token}
end
return {0, redis.call('PTTL', key), 0}
