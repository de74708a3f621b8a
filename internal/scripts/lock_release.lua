-- lock_release.lua: release one level of a reentrant lock or the whole hold, undo an acquisition
-- whose outcome is unknown, or withdraw a waiter's claim. Formats: lock_value.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  wake-up channel of the lock
-- KEYS[3]  release history of the lock for the owner's client (see lock_value.lua)
-- ARGV[1]  owner id
-- ARGV[2]  level id to release
-- ARGV[3]  "1": final release: the owner's client holds no other level, so the lock is freed whatever
--          levels Redis still lists (a re-entry whose undo failed may have left one); "0": remove the
--          level only (the lock stays held, even with no level left, until the final release)
-- ARGV[4]  "" or, for a final release that names no heir, the value the lock holds if the level is
--          the only one and nobody waits ("<owner>|<level>|"): then it is freed without parsing
-- ARGV[5]  lease in milliseconds set by a partial release (0 keeps the TTL); for a transfer, the
--          heir's lease
-- ARGV[6]  how long, in milliseconds, the history keeps a final release (the re-send window); 0 for
--          an undo, which writes no history (see lock_value.lua: the client may have another release
--          of the lock in flight)
-- ARGV[7]  how long, in milliseconds, a lock handed to a claiming waiter stays reserved for it before
--          it confirms (bounds the stall if that waiter died)
-- ARGV[8]  publish command: PUBLISH or SPUBLISH
-- ARGV[9]  optional: owner id of a waiter of the releasing client: if the final release finds nobody
--          else waiting, the lock is transferred to it (levels "1", lease ARGV[5]) instead of freed
--
-- returns  0    the owner's hold is released: freed (publishing a wake-up if anyone failed to take
--               the lock during it) or handed to the claimer; also the answer, to any release, once
--               the history shows the owner's final release did that
--          1    partial release: the level is gone (or was already), the owner still holds the lock
--          -2   released and transferred to ARGV[9] (also from the history, or when ARGV[9] holds it)
--          -1   the owner does not hold the lock and the history has nothing on it: it was lost, or
--               an undone acquisition was never applied. A claim of the owner's, if any, is
--               withdrawn.
--
-- Safe to run twice: removing a level that is gone changes nothing; a repeat of a final release finds
-- the owner's outcome in the history (owner ids are never reused, a client sends at most one final
-- release per owner, and its history is not overwritten before that release answered), or, for a
-- transfer, the heir holding the lock.
local key, channel, history = KEYS[1], KEYS[2], KEYS[3]
local owner, level, final, expected = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local leaseMs, historyMs, reserveMs, publish = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
local heir = ARGV[9] or ''
if historyMs == '0' then
  history_push = function() end -- an undo
end

local cur = redis.call('GET', key)
if expected ~= '' and cur == expected then
  -- The common case: the owner's only level, nobody waiting.
  redis.call('DEL', key)
  history_push(history, owner, 'r', historyMs)
  return 0
end
local holder, levels, mark
if cur then
  holder, levels, mark = lock_decode(cur)
  if not holder then
    return wrong_type()
  end
end

if holder ~= owner then
  if holder and heir ~= '' and holder == heir then
    return -2 -- the heir cannot have acted on it yet: the releasing client hands it over afterwards
  end
  if holder and mark == owner .. '@' then
    redis.call('SET', key, lock_encode(holder, levels, 'w'), 'KEEPTTL')
  end
  local outcome = history_outcome(history, owner)
  if outcome == 'r' then
    return 0
  elseif outcome == 't' then
    return -2
  end
  return -1
end

if final ~= '1' then
  if levels_has(levels, level) then
    local v = lock_encode(owner, levels_remove(levels, level), mark)
    if leaseMs > 0 then
      redis.call('SET', key, v, 'PX', leaseMs)
    else
      redis.call('SET', key, v, 'KEEPTTL')
    end
  end
  return 1
end

local claimer = lock_claimer(mark)
if claimer then
  -- Starvation mode: hand the lock to the waiter that claimed it, reserved until it confirms.
  redis.call('SET', key, lock_encode(claimer, '1', 'w'), 'PX', reserveMs)
  redis.call(publish, channel, '0')
  history_push(history, owner, 'r', historyMs)
  return 0
end
if heir ~= '' and mark == '' then
  redis.call('SET', key, lock_encode(heir, '1', ''), 'PX', leaseMs)
  history_push(history, owner, 't', historyMs)
  return -2
end
redis.call('DEL', key)
if mark == 'w' then
  redis.call(publish, channel, '0')
end
history_push(history, owner, 'r', historyMs)
return 0
