-- lock_acquire.lua: acquire or re-enter a reentrant lock (the slow path: the client first tries a
-- plain SET NX PX, which takes a free lock in one command, and runs this script when that fails).
--
-- KEYS[1]  lock key: absent when free, else a string "<owner>|<count>|<req>|<mark>": owner id, hold
--          count, id of the last request the owner applied, and a mark: "" nobody has failed to take
--          the lock during this hold; "w" someone has (the final release must publish a wake-up);
--          "<owner>@" a waiter that has waited too long claimed the lock: the final release hands the
--          lock to it directly instead of freeing it
-- ARGV[1]  owner id (client id + sequence; unique per acquisition; never contains '|' or '@')
-- ARGV[2]  lease in milliseconds; 0 on re-entry means "keep the current TTL" (fixed-lease holds)
-- ARGV[3]  request id (unique per call)
-- ARGV[4]  optional, default "0": "1" to re-enter: the caller holds the lock and wants one more
--          hold; "0" for a fresh acquisition, which never re-enters (a fresh owner found holding was
--          handed the lock)
-- ARGV[5]  optional, default "0": "1" if the caller has waited long enough to claim the lock (fresh
--          acquisitions only)
--
-- returns  holdCount ≥ 1   acquired (fresh, handed over, or re-entered)
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
local owner, leaseMs, req, reenter, starving = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]

local cur = redis.call('GET', key)
if not cur then
  if reenter == '1' then
    return -1
  end
  redis.call('SET', key, owner .. '|1|' .. req .. '|', 'PX', leaseMs)
  return 1
end

local holder, count, last, mark = string.match(cur, '^([^|]+)|(%d+)|([^|]*)|([^|]*)$')
if not holder then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
count = tonumber(count)

if holder ~= owner then
  if reenter ~= '1' then
    if starving == '1' and (mark == '' or mark == 'w') then
      redis.call('SET', key, holder .. '|' .. count .. '|' .. last .. '|' .. owner .. '@', 'KEEPTTL')
    elseif mark == '' then
      redis.call('SET', key, cur .. 'w', 'KEEPTTL') -- a waiter: the release must publish
    end
  end
  return -3 - redis.call('PTTL', key)
end

if last ~= req then
  if reenter == '1' then
    count = count + 1
  end
  -- else: a fresh owner found holding was handed the lock by a release; take it as it is.
  local v = owner .. '|' .. count .. '|' .. req .. '|' .. mark
  if leaseMs > 0 then
    redis.call('SET', key, v, 'PX', leaseMs)
  else
    redis.call('SET', key, v, 'KEEPTTL')
  end
end
return count
