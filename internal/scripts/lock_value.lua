-- lock_value.lua: the one Lua encoder and decoder of a lock's stored formats. It is prepended, after
-- wait_queue.lua, to every script that reads or writes them (see scripts.go); the Go side has its own
-- single decoder.
--
-- The lock key, absent when free, holds "<owner>|<levels>|<mark>" for a Lock, the same followed by
-- "|f" for a FairLock, "|s" for a SpinLock and "|t<token>" for a FencedLock; a script given one kind
-- refuses the others
-- with WRONGTYPE, so a name used as two kinds is an error, not two locks:
--   owner   the holder's owner id: "<client id>:<sequence>", never reused; never contains | , @ = ;
--   levels  the owner's hold levels, comma-separated level ids ([0-9a-z]+, unique per owner): one
--           per successful acquisition or re-entry not yet unlocked. Storing ids rather than a count
--           makes adding and removing a level idempotent, so a re-sent command cannot count twice.
--           It may be empty for a moment (a re-entry in flight while the other levels were unlocked).
--   mark    ""  nobody is queued for the lock
--           "w<epoch>" the wait queue (wait_queue.lua) may hold waiters: the final release hands
--               the lock to its first live waiter, if any (set by a waiter that queued, and by a
--               hand-over); epoch, digits, is the queue's epoch (see wait_queue.lua; "" unknown)
--   token   FencedLock: the fencing token of this holder's acquisition (see lock_acquire.lua)
--
-- No key records what a lock script did: a repeat of a script is answered by the state it finds
-- (see lock_release.lua).

-- lock_decode returns owner, levels, mark, kind ("", "f", "s" or "t") and token (FencedLock), or nil if v
-- is not a lock string.
local function lock_decode(v)
  local owner, levels, mark, rest = string.match(v, '^([^|,@=;]+)|([0-9a-z,]*)|(w?%d*)(.*)$')
  if not owner or (mark ~= '' and string.sub(mark, 1, 1) ~= 'w') then
    return nil
  end
  if levels ~= '' and (string.find(',' .. levels .. ',', ',,', 1, true)) then
    return nil -- an empty level id
  end
  if rest == '' then
    return owner, levels, mark, '', nil
  elseif rest == '|f' or rest == '|s' then
    return owner, levels, mark, string.sub(rest, 2), nil
  end
  local token = string.match(rest, '^|t(%d+)$')
  if not token then
    return nil
  end
  return owner, levels, mark, 't', token
end

local function lock_encode(owner, levels, mark, kind, token)
  local v = owner .. '|' .. levels .. '|' .. mark
  if kind == 'f' or kind == 's' then
    return v .. '|' .. kind
  elseif kind == 't' then
    return v .. '|t' .. token
  end
  return v
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

-- mark_epoch is the queue epoch a lock's mark carries ("" if none).
local function mark_epoch(mark)
  return string.sub(mark, 2)
end

-- lock_hand_over gives the lock at key to the first live waiter of the queue, if any, and reports
-- whether it did: the lock becomes that waiter's (levels "1", a new fencing token for a FencedLock,
-- the queue's epoch, or a new one if epoch is ""), reserved for the waiter's timeout at most, by
-- when a live waiter has renewed or confirmed it and a dead one stalls nobody any longer. The waiter
-- is woken on its client's channel by the message "<id>|<ticket>|<reserve ms>[|<token>]", which tells
-- it that it holds the lock: for the reservation (counted from the moment it sent the attempt that
-- returned that ticket, which ran before this) and, for a FencedLock, with that token. If nobody is
-- left in the queue, its deadlines go too: the caller frees the lock or leaves it unmarked, which
-- ends the epoch.
local function lock_hand_over(key, q, qt, fence, kind, publish, wakePrefix, epoch)
  local token, incr
  if kind == 't' then
    incr = function()
      token = redis.call('INCR', fence)
      return token
    end
  end
  local head, reserveMs = queue_serve(q, qt, publish, wakePrefix, incr)
  if not head then
    local exhausted = reserveMs
    if not exhausted then
      redis.call('DEL', qt)
    end
    return false
  end
  if epoch == '' then
    local _, nowUs = queue_now()
    epoch = string.format('%d', nowUs)
  end
  -- Marked whether or not others wait: the next release looks, which costs it one command when
  -- nobody does, and saves every hand-over a look.
  redis.call('SET', key, lock_encode(head, '1', 'w' .. epoch, kind, token), 'PX', reserveMs)
  return true
end
