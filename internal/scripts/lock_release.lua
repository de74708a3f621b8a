-- lock_release.lua: release one level of a Lock, FairLock or FencedLock or the whole hold, undo an
-- acquisition whose outcome is unknown, or take a waiter that gave up out of the queue. Formats:
-- lock_value.lua, wait_queue.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  wait queue: order (q)
-- KEYS[3]  wait queue: deadlines (qt)
-- KEYS[4]  fencing counter (FencedLock; any key of the lock's slot otherwise)
-- ARGV[1]  owner id
-- ARGV[2]  level id to release
-- ARGV[3]  "1": final release: the owner's client holds no other level, so the lock is released
--          whatever levels Redis still lists (a re-entry whose undo failed may have left one); "0":
--          remove the level only (the lock stays held, even with no level left, until the final
--          release); an undo is a final release too
-- ARGV[4]  "" or, for a final release that names no heir, the value the lock holds if the level is
--          the only one and nobody is queued: then it is freed without parsing
-- ARGV[5]  lease in milliseconds set by a partial release (0 keeps the TTL); for a transfer, the
--          heir's lease
-- ARGV[6]  publish command: PUBLISH or SPUBLISH
-- ARGV[7]  wake channel prefix: a queued waiter is woken on "<prefix><its client id>"
-- ARGV[8]  kind: "", "f" or "t" (see lock_acquire.lua)
-- ARGV[9]  the client's waiter timeout in milliseconds (the owner's member of the queue: see
--          wait_queue.lua)
-- ARGV[10] optional: owner id of a waiter in the releasing client: if the final release finds nobody
--          queued, the lock is transferred to it (levels "1", lease ARGV[5]) instead of freed; ""
--          none
-- ARGV[11] optional, for the undo of a waiting owner that was given the lock but whose answer came
--          too late for it to rely on (a give-back): "" none; else the owner's ticket ("0" if it took
--          the lock without queueing). If the owner holds the lock, it rejoins the queue at its place
--          (queue_rejoin in wait_queue.lua: with that ticket, or ahead of every waiter) before the
--          lock is handed to the head of the queue: so it is handed back to the owner, which keeps
--          its turn. If the owner no longer holds the lock (its lease ran out first), it just leaves
--          the queue, as any undo.
--
-- The final release of a lock marked "w" hands it to the first live waiter of the queue (see
-- lock_hand_over in lock_value.lua); dead waiters are evicted first.
--
-- returns  0    the owner's hold is released: freed, or handed to the head of the queue
--          1    partial release: the level is gone (or was already), the owner still holds the lock
--          -2   released and transferred to ARGV[10] (also when ARGV[10] holds it already)
--          -1   the owner does not hold the lock: it was lost, released by an earlier copy of this
--               release, or an undone acquisition was never applied. The owner leaves the queue, if
--               queued.
--
-- Safe to run twice, and it keeps no record: what a repeat finds answers it. Removing a level that
-- is gone changes nothing; a repeat of a final release finds the owner gone (owner ids are never
-- reused, so nobody else's hold is touched) and answers -1, which the client, told that the reply
-- answers a re-send (see releaseFinal in hold.go), reads as released unless the hold was known lost;
-- a repeat of a transfer finds the heir holding the lock and answers -2. A repeat of a give-back
-- finds the owner holding the lock it was handed back, and hands it back again.
--
-- The common case, the owner's only level with nobody queued (ARGV[4]), is answered before the
-- prelude is run: defining its functions costs Redis more than the rest of such a release.
local cur = redis.call('GET', KEYS[1])
if ARGV[4] ~= '' and cur == ARGV[4] then
  redis.call('DEL', KEYS[1])
  return 0
end
-- @prelude
local key, q, qt, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, level, final = ARGV[1], ARGV[2], ARGV[3]
local leaseMs, publish, wakePrefix, kind = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
local waiterMs, heir, rejoin = ARGV[9], ARGV[10] or '', ARGV[11] or ''

local holder, levels, mark, vkind, token
if cur then
  holder, levels, mark, vkind, token = lock_decode(cur)
  if not holder or vkind ~= kind then
    queue_leave(q, owner, waiterMs) -- an undo: the owner leaves its own kind's queue all the same
    return wrong_type()
  end
end

if holder ~= owner then
  if holder and heir ~= '' and holder == heir then
    return -2 -- the heir cannot have acted on it yet: the releasing client hands it over afterwards
  end
  queue_leave(q, owner, waiterMs)
  return -1
end

if final ~= '1' then
  if levels_has(levels, level) then
    local v = lock_encode(owner, levels_remove(levels, level), mark, kind, token)
    if leaseMs > 0 then
      redis.call('SET', key, v, 'PX', leaseMs)
    else
      redis.call('SET', key, v, 'KEEPTTL')
    end
  end
  return 1
end

if rejoin ~= '' then
  queue_rejoin(q, qt, owner, waiterMs, rejoin)
  mark = 'w' .. mark_epoch(mark) -- the owner is queued: hand the lock over (a new epoch if it had none)
end
if mark ~= '' and lock_hand_over(key, q, qt, fence, kind, publish, wakePrefix, mark_epoch(mark)) then
  return 0
end
if heir ~= '' then
  local t
  if kind == 't' then
    t = redis.call('INCR', fence)
  end
  redis.call('SET', key, lock_encode(heir, '1', '', kind, t), 'PX', leaseMs)
  return -2
end
redis.call('DEL', key)
return 0
