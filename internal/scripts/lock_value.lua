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
-- A release history key belongs to one client of the lock: it holds "<owner>=<outcome>", the last
-- final release by an owner of that client, with the re-send window as TTL. A client releases one
-- owner of a lock at a time (its goroutines take turns for the lock, and the turn passes only once the
-- release has answered), so its key is overwritten only after the release it records was answered: a
-- re-sent release always finds its own entry, however many releases of other clients came in
-- between. Outcomes:
--   r  freed the lock, or handed it to a claimer
--   t  transferred the lock to the waiter the releasing client named
-- A force unlock records "<request id>=<f or n>" (n: nothing to delete) in a key of its own.

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

-- history_outcome returns the outcome recorded for id in the history key ("r", "t", "f", "n"), or
-- nil.
local function history_outcome(history, id)
  local v = redis.pcall('GET', history)
  if type(v) ~= 'string' then
    return nil
  end
  local who, outcome = string.match(v, '^(.*)=(%a)$')
  if who == id then
    return outcome
  end
  return nil
end

-- history_push records outcome for id in the history key, kept for historyMs.
local function history_push(history, id, outcome, historyMs)
  redis.call('SET', history, id .. '=' .. outcome, 'PX', historyMs)
end
