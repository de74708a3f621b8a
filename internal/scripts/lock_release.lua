-- lock_release.lua: release one hold of a reentrant lock, or undo an acquisition whose reply was lost.
--
-- KEYS[1]  lock key (format in lock_acquire.lua)
-- KEYS[2]  wake-up channel of the lock
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to reset on a partial release; 0 keeps the current TTL
-- ARGV[3]  request id (unique per call)
-- ARGV[4]  publish command: PUBLISH or SPUBLISH
-- ARGV[5]  how long, in milliseconds, the released key keeps the id of the final release
-- ARGV[6]  "" for a normal release; an acquire request id to undo that acquisition only if it was applied
--
-- returns  {1, 0}      fully released: the key now holds no owner, one wake-up was published
--          {1, n}      still held by the owner with hold count n
--          {0, 0}      the owner does not hold the lock (or, when undoing, the acquisition was not applied)
--
-- Safe to run twice: a repeat of an applied partial release is recognised by <req>; a repeat of the
-- final release finds its id in <rel>, which the released key keeps and the next holder carries over,
-- so it answers {1, 0} again instead of "not held".
local key, channel = KEYS[1], KEYS[2]
local owner, leaseMs, req, publish, memoMs, undo =
  ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6]

local cur = redis.call('GET', key)
if not cur then
  return {0, 0}
end
local holder, count, last, rel = string.match(cur, '^([^|]*)|(%d+)|([^|]*)|([^|]*)$')
if not holder then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
if holder ~= owner then
  if undo == '' and rel == req then
    return {1, 0}
  end
  return {0, 0}
end
count = tonumber(count)
if last == req then
  return {1, count}
end
if undo ~= '' and last ~= undo then
  return {0, 0}
end

count = count - 1
if count > 0 then
  local v = owner .. '|' .. count .. '|' .. req .. '|' .. rel
  if leaseMs > 0 then
    redis.call('SET', key, v, 'PX', leaseMs)
  else
    redis.call('SET', key, v, 'KEEPTTL')
  end
  return {1, count}
end

redis.call('SET', key, '|0||' .. req, 'PX', memoMs)
redis.call(publish, channel, '0')
return {1, 0}
