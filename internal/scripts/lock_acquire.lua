-- lock_acquire.lua: acquire or re-enter a reentrant lock (the slow path: the client first tries a
-- plain SET NX PX, which takes a free lock in one command, and runs this script when that fails).
--
-- KEYS[1]  lock key: absent when free, else a string "<owner>|<count>|<req>|<w>": owner id, hold
--          count, id of the last request the owner applied, and "w" once someone failed to take it
--          (so the final release knows whether anyone may be waiting for a wake-up), else ""
-- ARGV[1]  owner id (client id + sequence; unique per acquisition; never contains '|')
-- ARGV[2]  lease in milliseconds; 0 on re-entry means "keep the current TTL" (fixed-lease holds)
-- ARGV[3]  request id (unique per call)
-- ARGV[4]  "1" to only re-enter: never take a free lock (the caller believes it already holds it)
--
-- returns  holdCount ≥ 1   acquired (fresh or re-entered)
--          -3 - pttl        not acquired (always ≤ -1): held by another owner, whose remaining TTL is
--                           pttl ms (-1: no expiry), or ARGV[4] is "1" and the owner holds nothing
--                           (pttl -2 if the lock is free). One integer keeps the reply cheap to parse.
--
-- Safe to run twice: a repeat of a request the owner already applied (<req> matches) changes nothing
-- and returns the same answer, so a go-redis re-send after a lost reply cannot count twice. This also
-- recognises a fast-path SET NX that was applied but whose reply was lost.
-- The first command is a type-checked read, and a string in another format is refused, so a key used
-- for something else fails with WRONGTYPE before any write.
local key = KEYS[1]
local owner, leaseMs, req, reenterOnly = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local cur = redis.call('GET', key)
if not cur then
  if reenterOnly == '1' then
    return -1
  end
  redis.call('SET', key, owner .. '|1|' .. req .. '|', 'PX', leaseMs)
  return 1
end

local holder, count, last, waited = string.match(cur, '^([^|]+)|(%d+)|([^|]*)|(w?)$')
if not holder then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
if holder ~= owner then
  if waited == '' and reenterOnly ~= '1' then
    redis.call('SET', key, cur .. 'w', 'KEEPTTL') -- a waiter: the release must publish
  end
  return -3 - redis.call('PTTL', key)
end

count = tonumber(count)
if last ~= req then
  count = count + 1
  local v = owner .. '|' .. count .. '|' .. req .. '|' .. waited
  if leaseMs > 0 then
    redis.call('SET', key, v, 'PX', leaseMs)
  else
    redis.call('SET', key, v, 'KEEPTTL')
  end
end
return count
