-- lock_acquire.lua: acquire or re-enter a Lock, FairLock or FencedLock. A fresh Lock acquisition
-- first tries a plain SET NX PX, which takes a free lock in one command, and runs this script when
-- that fails; the other kinds always run it. Formats: lock_value.lua, wait_queue.lua.
--
-- KEYS[1]  lock key
-- KEYS[2]  wait queue: order (q)
-- KEYS[3]  wait queue: deadlines (qt)
-- KEYS[4]  fencing counter (FencedLock; any key of the lock's slot otherwise)
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to set; 0 keeps the current TTL (re-entry of a fixed-lease hold)
-- ARGV[3]  level id to add ("1" for a fresh acquisition)
-- ARGV[4]  mode: "f" one attempt, never queued; "w" an attempt of a waiting acquisition: if the lock
--          is not to be had, queue the owner (keeping its place) and mark the lock "w"; "r" re-entry
--          (the owner holds the lock and wants one more level)
-- ARGV[5]  kind: "" Lock, "f" FairLock (a free lock goes only to the head of the queue, or to
--          anyone if nobody waits), "t" FencedLock (a fresh holder gets the next fencing token)
-- ARGV[6]  the client's waiter timeout in milliseconds (mode "w": how long its liveness deadline is
--          moved; see wait_queue.lua)
-- ARGV[7]  the queue epoch of the client's recent liveness refresh for this lock, "" if none (mode
--          "w": the client's deadline is refreshed unless the lock carries that epoch)
--
-- returns  {n, token, ticket, epoch}:
--          n ≥ 1      acquired: the owner now holds n levels (fresh, handed over, or re-entered)
--          n = -3 - pttl  not acquired (always ≤ -1): held by another owner whose remaining TTL is
--                     pttl ms (-1: no expiry; 0 when queued by mode "w": the waiter is woken); or
--                     free but another waiter comes first (FairLock; pttl -2); or a re-entry by an
--                     owner that holds nothing (pttl -2: -1)
--          token      FencedLock: the holder's fencing token when acquired; 0 otherwise
--          ticket     the owner's ticket in the queue if this attempt queued it (see wait_queue.lua;
--                     a hand-over message names it); 0 otherwise
--          epoch      the queue epoch under which the attempt refreshed the client's liveness
--                     deadline; 0 if it did not
--
-- Safe to run twice: adding a level that is already there changes nothing, and queueing keeps an
-- existing place, so a re-sent re-entry, attempt or fresh acquisition (including a fast-path SET NX
-- that was applied but whose reply was lost) answers as the first run did. An owner found holding
-- the lock was handed it by a release (or its own SET NX was applied): it takes the lock as it is.
-- The first command is a type-checked read; a string in another format, or a lock of another kind, is
-- refused with WRONGTYPE before any write.
local key, q, qt, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, leaseMs, level, mode, kind = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local waiterMs, known = ARGV[6], ARGV[7] or ''

local function answer(n, token, ticket, epoch)
  return { n, tonumber(token or 0), ticket or 0, tonumber(epoch or 0) }
end

-- join queues the owner; epoch is the lock's ("" if none: the join starts one).
local function join(epoch)
  local ticket, e, refreshed = queue_join(q, qt, owner, waiterMs, epoch, known)
  return ticket, e, refreshed and e or nil
end

local cur = redis.call('GET', key)
if not cur then
  if mode == 'r' then
    return answer(-1)
  end
  local mark = ''
  if redis.call('EXISTS', q) == 1 then
    queue_purge(q, qt)
    if kind == 'f' then
      -- A free fair lock goes to the first live waiter, if any.
      local head, exhausted = queue_head(q, qt)
      if exhausted or (head and head ~= owner) then
        if mode == 'w' then
          local ticket, _, refreshed = join('')
          return answer(-1, nil, ticket, refreshed)
        end
        return answer(-1)
      end
    end
    queue_leave(q, owner, waiterMs) -- if it was queued
    local first = redis.call('ZRANGE', q, 0, 0)[1]
    if first and first ~= queue_end then
      local _, nowUs = queue_now() -- the lock was free: its epoch is gone, start a new one
      mark = string.format('w%d', nowUs)
    else
      redis.call('DEL', q, qt) -- nobody waits: the lock is unmarked, which ends the epoch
    end
  end
  local token
  if kind == 't' then
    token = redis.call('INCR', fence)
  end
  redis.call('SET', key, lock_encode(owner, level, mark, kind, token), 'PX', leaseMs)
  return answer(1, token)
end

local holder, levels, mark, vkind, token = lock_decode(cur)
if not holder or vkind ~= kind then
  return wrong_type()
end

if holder ~= owner then
  if mode == 'w' then
    local ticket, epoch, refreshed = join(mark_epoch(mark))
    if mark ~= 'w' .. epoch then
      redis.call('SET', key, lock_encode(holder, levels, 'w' .. epoch, kind, token), 'KEEPTTL')
    end
    return answer(-3, nil, ticket, refreshed) -- queued: it will be woken, no need for the holder's TTL
  end
  return answer(-3 - redis.call('PTTL', key))
end

if not levels_has(levels, level) then
  levels = levels_add(levels, level)
end
local v = lock_encode(owner, levels, mark, kind, token)
if leaseMs > 0 then
  redis.call('SET', key, v, 'PX', leaseMs)
elseif v ~= cur then
  redis.call('SET', key, v, 'KEEPTTL')
end
return answer(levels_count(levels), token)
