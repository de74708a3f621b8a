-- lock_acquire.lua: acquire or re-enter a reentrant lock.
--
-- KEYS[1]  lock key, a string "<owner>|<count>|<req>|<rel>": owner id, hold count, id of the last
--          request the owner applied, id of the final release before this hold. After a final release
--          it holds "|0||<rel>" (no owner) for a few seconds, to recognise a re-sent release.
-- ARGV[1]  owner id (client id + sequence; unique per acquisition; never contains '|')
-- ARGV[2]  lease in milliseconds; 0 on re-entry means "keep the current TTL" (fixed-lease holds)
-- ARGV[3]  request id (unique per call)
-- ARGV[4]  "1" to only re-enter: never take a free lock (the caller believes it already holds it)
--
-- returns  {1, holdCount}  acquired (fresh or re-entered)
--          {0, pttl}       not acquired: held by another owner (pttl = its remaining TTL in ms, -1: no
--                          expiry), or ARGV[4] is "1" and the owner holds nothing (pttl -2 if free)
--
-- Safe to run twice: a repeat of a request the owner already applied (<req> matches) changes nothing
-- and returns the same answer, so a go-redis re-send after a lost reply cannot count twice.
-- The first command is a type-checked read, and a string in another format is refused, so a key used
-- for something else fails with WRONGTYPE before any write.
local key = KEYS[1]
local owner, leaseMs, req, reenterOnly = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local cur = redis.call('GET', key)
local holder, count, last, rel = '', 0, '', ''
if cur then
  holder, count, last, rel = string.match(cur, '^([^|]*)|(%d+)|([^|]*)|([^|]*)$')
  if not holder then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
  count = tonumber(count)
end

if holder == owner then
  if last ~= req then
    count = count + 1
    local v = owner .. '|' .. count .. '|' .. req .. '|' .. rel
    if leaseMs > 0 then
      redis.call('SET', key, v, 'PX', leaseMs)
    else
      redis.call('SET', key, v, 'KEEPTTL')
    end
  end
  return {1, count}
end

if holder ~= '' or reenterOnly == '1' then
  return {0, redis.call('PTTL', key)}
end

redis.call('SET', key, owner .. '|1|' .. req .. '|' .. rel, 'PX', leaseMs)
return {1, 1}
