-- lock_release.lua: release one hold of a reentrant lock, undo an acquisition whose reply was lost,
-- or withdraw a waiter's claim.
--
-- KEYS[1]  lock key (format in lock_acquire.lua)
-- KEYS[2]  wake-up channel of the lock
-- KEYS[3]  release record: the final release renames the lock key to it, so it keeps the last
--          holder's value (and remaining TTL) until the next final release of the same lock
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to reset on a partial release; 0 keeps the current TTL
-- ARGV[3]  request id (unique per call)
-- ARGV[4]  "" or the value the owner expects the lock to hold if this is its final hold and nobody
--          waits ("<owner>|1|<last req>|"): when it matches, the lock is freed without parsing
-- ARGV[5]  how long, in milliseconds, a lock handed to a claiming waiter stays reserved for it
--          before it confirms (bounds the stall if that waiter died)
-- ARGV[6]  optional, default "PUBLISH": publish command, PUBLISH or SPUBLISH
-- ARGV[7]  optional, default "": an acquire request id to undo that acquisition only if it was applied
-- ARGV[8]  optional, default "": the owner id of a waiter in the same process: if this is the final
--          release and nobody else waits, the lock is transferred to that owner (lease ARGV[2],
--          request id ARGV[3]) instead of being freed
--
-- returns  0           fully released (freed, or handed to the waiter that claimed it; a wake-up was
--                      published if anyone had failed to take the lock during this hold)
--          n ≥ 1       still held by the owner with hold count n
--          -1          the owner does not hold the lock (or, when undoing, the acquisition was not
--                      applied); a claim of the owner's, if any, is withdrawn
--          -2          fully released and transferred to ARGV[8]
--
-- Safe to run twice: a repeat of an applied partial release is recognised by <req>, and so is a
-- repeat of a transfer or hand-over (the new holder's <req> is this request's id); a repeat of the
-- final release finds the owner in the release record (owner ids are never reused, and the client
-- stops sending releases for an owner once it saw the final one) and answers 0 again.
local key, channel, record = KEYS[1], KEYS[2], KEYS[3]
local owner, leaseMs, req, expected, reserveMs = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local publish, undo, heir = ARGV[6] or 'PUBLISH', ARGV[7] or '', ARGV[8] or ''
local pattern = '^([^|]+)|(%d+)|([^|]*)|([^|]*)$'

local cur = redis.call('GET', key)
if cur and cur == expected then
  -- The common case: the owner's only hold, nobody waiting, not a repeat (<last req> is older).
  redis.call('RENAME', key, record)
  return 0
end
local holder, count, last, mark
if cur then
  holder, count, last, mark = string.match(cur, pattern)
  if not holder then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
end
if holder ~= owner then
  if holder and last == req and undo == '' then
    return -2
  end
  if holder and string.sub(mark, 1, #owner + 1) == owner .. '@' then
    redis.call('SET', key, holder .. '|' .. count .. '|' .. last .. '|w', 'KEEPTTL')
  end
  if undo == '' then
    local prev = redis.pcall('GET', record)
    if type(prev) == 'string' and string.match(prev, pattern) == owner then
      return 0
    end
  end
  return -1
end
count = tonumber(count)
if last == req then
  return count
end
if undo ~= '' and last ~= undo then
  return -1
end

count = count - 1
if count > 0 then
  local v = owner .. '|' .. count .. '|' .. req .. '|' .. mark
  if leaseMs > 0 then
    redis.call('SET', key, v, 'PX', leaseMs)
  else
    redis.call('SET', key, v, 'KEEPTTL')
  end
  return count
end

if mark == '' and heir ~= '' then
  redis.call('SET', key, heir .. '|1|' .. req .. '|', 'PX', leaseMs)
  return -2
end

local claimer = string.match(mark, '^([^@]+)@')
if claimer then
  -- Starvation mode: hand the lock to the waiter that claimed it, reserved until it confirms.
  redis.call('SET', key, claimer .. '|1|' .. req .. '|w', 'PX', reserveMs)
  redis.call(publish, channel, '0')
  return 0
end

redis.call('RENAME', key, record)
if mark == 'w' then
  redis.call(publish, channel, '0')
end
return 0
