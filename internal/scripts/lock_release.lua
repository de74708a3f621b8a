-- lock_release.lua: release one hold of a reentrant lock, or undo an acquisition whose reply was lost.
--
-- KEYS[1]  lock hash (see lock_acquire.lua)
-- KEYS[2]  wake-up channel of the lock
-- KEYS[3]  release memo key of this request: written by a final release, kept for ARGV[5] ms
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to reset on a partial release; 0 keeps the current TTL
-- ARGV[3]  request id (unique per call)
-- ARGV[4]  publish command: PUBLISH or SPUBLISH
-- ARGV[5]  memo TTL in milliseconds
-- ARGV[6]  "" for a normal release; an acquire request id to undo that acquisition only if it was applied
--
-- returns  {1, 0}      fully released: key deleted, one wake-up published
--          {1, n}      still held by the owner with hold count n
--          {0, 0}      the owner does not hold the lock (or, when undoing, the acquisition was not applied)
--
-- Safe to run twice: a repeat of an applied partial release is recognised by "~req"; a repeat of the final
-- release finds the memo key and answers {1, 0} again instead of "not held".
local key, channel, memo = KEYS[1], KEYS[2], KEYS[3]
local owner, leaseMs, req, publish, memoMs, undo =
  ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6]

local state = redis.call('HMGET', key, owner, '~req')
local count, last = state[1], state[2]
if not count then
  if undo == '' and redis.call('EXISTS', memo) == 1 then
    return {1, 0}
  end
  return {0, 0}
end
if last == req then
  return {1, tonumber(count)}
end
if undo ~= '' and last ~= undo then
  return {0, 0}
end

count = tonumber(count) - 1
if count > 0 then
  redis.call('HSET', key, owner, count, '~req', req)
  if leaseMs > 0 then
    redis.call('PEXPIRE', key, leaseMs)
  end
  return {1, count}
end

redis.call('DEL', key)
redis.call('SET', memo, '1', 'PX', memoMs)
redis.call(publish, channel, '0')
return {1, 0}
