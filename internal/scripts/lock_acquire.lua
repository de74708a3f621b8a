-- lock_acquire.lua: acquire or re-enter a reentrant lock (the slow path: a fresh acquisition first
-- tries a plain SET NX PX, which takes a free lock in one command, and runs this script when that
-- fails). Formats: lock_value.lua.
--
-- KEYS[1]  lock key
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to set; 0 keeps the current TTL (re-entry of a fixed-lease hold)
-- ARGV[3]  level id to add ("1" for a fresh acquisition)
-- ARGV[4]  mode: "f" fresh acquisition; "s" fresh, by a waiter that has waited long enough to claim
--          the lock; "r" re-entry (the owner holds the lock and wants one more level)
--
-- returns  n ≥ 1      acquired: the owner now holds n levels (fresh, handed over, or re-entered)
--          -3 - pttl  not acquired (always ≤ -1): held by another owner whose remaining TTL is pttl
--                     ms (-1: no expiry); or a re-entry by an owner that holds nothing (pttl -2:
--                     free, so -1). One integer keeps the reply cheap to parse.
--
-- Safe to run twice: adding a level that is already there changes nothing, so a re-sent re-entry or
-- a re-sent fresh acquisition (including a fast-path SET NX that was applied but whose reply was
-- lost) answers as the first run did. A fresh owner found holding the lock was handed it by a
-- release, or its own SET NX was applied: it takes the lock as it is.
-- The first command is a type-checked read; a string in another format is refused with WRONGTYPE
-- before any write.
local key = KEYS[1]
local owner, leaseMs, level, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local cur = redis.call('GET', key)
if not cur then
  if mode == 'r' then
    return -1
  end
  redis.call('SET', key, lock_encode(owner, level, ''), 'PX', leaseMs)
  return 1
end

local holder, levels, mark = lock_decode(cur)
if not holder then
  return wrong_type()
end

if holder ~= owner then
  if mode == 's' and not lock_claimer(mark) then
    redis.call('SET', key, lock_encode(holder, levels, owner .. '@'), 'KEEPTTL')
  elseif mode ~= 'r' and mark == '' then
    redis.call('SET', key, lock_encode(holder, levels, 'w'), 'KEEPTTL') -- the release must publish
  end
  return -3 - redis.call('PTTL', key)
end

if not levels_has(levels, level) then
  levels = levels_add(levels, level)
end
local v = lock_encode(owner, levels, mark)
if leaseMs > 0 then
  redis.call('SET', key, v, 'PX', leaseMs)
elseif v ~= cur then
  redis.call('SET', key, v, 'KEEPTTL')
end
return levels_count(levels)
