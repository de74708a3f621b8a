-- lock_value.lua: the one Lua encoder and decoder of a lock's stored formats. It is prepended to every
-- script that reads or writes them (see scripts.go); the Go side has its own single decoder.
--
-- The lock key, absent when free, holds the string "<owner>|<levels>|<mark>":
--   owner   the holder's owner id: client id + sequence, never reused; never contains | , @ = ;
--   levels  the owner's hold levels, comma-separated level ids ([0-9a-z]+, unique per owner): one
--           per successful acquisition or re-entry not yet unlocked. Storing ids rather than a count
--           makes adding and removing a level idempotent, so a re-sent command cannot count twice.
--           It may be empty for a moment (a re-entry in flight while the other levels were unlocked).
--   mark    ""            nobody failed to take the lock during this hold
--           "w"           someone did: the final release publishes a wake-up
--           "<claimer>@"  a waiter that has waited too long claimed the lock: the final release hands
--                         it to that owner instead of freeing it
--
-- The release history key is a sorted set of "<id>=<outcome>" members scored by the server time
-- (ms) of the event, kept for the go-redis re-send window and trimmed to the newest history_cap.
-- id is an owner id, or the request id of a force unlock; outcome is:
--   r  the owner's final release freed the lock or handed it to a claimer
--   t  the owner's final release transferred the lock to the waiter its client named
--   f  the owner's lock was force-unlocked (and, under the force unlock's request id: it deleted one)
--   n  a force unlock found nothing to delete
-- It lets a re-sent final release or force unlock, or a release overtaken by its owner's final one,
-- learn what happened.

local lock_pattern = '^([^|,@=;]+)|([0-9a-z,]*)|([^|]*)$'

-- lock_decode returns owner, levels, mark; or nil if v is not a lock string.
local function lock_decode(v)
  local owner, levels, mark = string.match(v, lock_pattern)
  if not owner then
    return nil
  end
  if mark ~= '' and mark ~= 'w' and not string.match(mark, '^[^|,@=;]+@$') then
    return nil
  end
  if levels ~= '' and (string.find(',' .. levels .. ',', ',,', 1, true)) then
    return nil -- an empty level id
  end
  return owner, levels, mark
end

local function lock_encode(owner, levels, mark)
  return owner .. '|' .. levels .. '|' .. mark
end

-- lock_claimer returns the owner id that claimed the lock, or nil.
local function lock_claimer(mark)
  return string.match(mark, '^(.+)@$')
end

local function levels_count(levels)
  if levels == '' then
    return 0
  end
  local _, commas = string.gsub(levels, ',', ',')
  return commas + 1
end

local function levels_has(levels, id)
  return string.find(',' .. levels .. ',', ',' .. id .. ',', 1, true) ~= nil
end

local function levels_add(levels, id)
  if levels == '' then
    return id
  end
  return levels .. ',' .. id
end

-- levels_remove removes id, which levels_has found (ids are [0-9a-z]: no pattern characters).
local function levels_remove(levels, id)
  local s = string.gsub(',' .. levels .. ',', ',' .. id .. ',', ',', 1)
  return string.sub(s, 2, -2)
end

local function wrong_type()
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

local history_cap = 128

-- history_ours reports whether the history key is absent or a sorted set (this package's type); any
-- other value there is left alone, and no history is kept.
local function history_ours(history)
  local t = redis.call('TYPE', history).ok
  return t == 'none' or t == 'zset'
end

-- history_outcome returns the recorded outcome for id ("r", "t", "f" or "n"), or nil.
local function history_outcome(history, id)
  if not history_ours(history) then
    return nil
  end
  for _, outcome in ipairs({ 'r', 't', 'f', 'n' }) do
    if redis.call('ZSCORE', history, id .. '=' .. outcome) then
      return outcome
    end
  end
  return nil
end

-- history_push records an outcome for id, and forgets what is older than historyMs or beyond the
-- newest history_cap entries.
local function history_push(history, id, outcome, historyMs)
  if not history_ours(history) then
    return
  end
  local t = redis.call('TIME')
  local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', history, nowMs, id .. '=' .. outcome)
  redis.call('ZREMRANGEBYSCORE', history, '-inf', nowMs - tonumber(historyMs))
  redis.call('ZREMRANGEBYRANK', history, 0, -history_cap - 1)
  redis.call('PEXPIRE', history, historyMs)
end
