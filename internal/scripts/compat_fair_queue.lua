-- compat_fair_queue.lua: the one Lua decoder of Java Redisson's RFairLock queue, used by a Client
-- made WithRedissonCompat. It is prepended, after compat_lock_value.lua (the lock's hash is an
-- RLock's), to every compat_fair_*.lua script (see scripts.go).
--
-- Beside the lock's hash at the name, Redisson keeps:
--   redisson_lock_queue:{<name>}    a LIST of the waiting owners, first come first
--   redisson_lock_timeout:{<name>}  a ZSET: owner -> deadline in ms (the clock of the client that
--                                   queued it, Java or Go) by which that waiter must have taken
--                                   the lock; a head past its deadline is stale and is purged by
--                                   whoever runs a script next
-- A waiter queued behind another gets the other's deadline plus its own threadWaitTime; one queued
-- first gets the lock's remaining TTL plus it. Each acquisition moves every remaining deadline one
-- threadWaitTime (the acquirer's) earlier. Waiters are woken on their own channel,
-- "redisson_lock__channel:{<name>}:<owner>": a release publishes "0" to the head's only.

-- rf_typed reports whether the queue and the deadlines are absent or of their types (a script
-- refuses anything else with WRONGTYPE before any write).
local function rf_typed(queue, timeouts)
  local q = redis.call('TYPE', queue)['ok']
  local t = redis.call('TYPE', timeouts)['ok']
  return (q == 'none' or q == 'list') and (t == 'none' or t == 'zset')
end

-- rf_purge removes the stale heads: while the head's deadline is not after now (Redisson's rule:
-- only heads are purged).
local function rf_purge(queue, timeouts, now)
  while true do
    local head = redis.call('LINDEX', queue, 0)
    if not head then
      return
    end
    local deadline = tonumber(redis.call('ZSCORE', timeouts, head))
    if deadline == nil or deadline > now then
      return
    end
    redis.call('ZREM', timeouts, head)
    redis.call('LPOP', queue)
  end
end

-- rf_notify_head publishes "0" on the head waiter's channel, if anyone waits.
local function rf_notify_head(queue, publish, prefix)
  local head = redis.call('LINDEX', queue, 0)
  if head then
    redis.call(publish, prefix .. ':' .. head, 0)
  end
end

-- rf_leave takes owner out of the queue, as Redisson's acquireFailed does: the waiters behind it
-- move the slot it frees earlier. The slot is read from the deadlines rather than passed: for a
-- waiter behind another, its deadline minus the other's (exactly its threadWaitTime, which later
-- moves shift alike); for the head, its deadline minus the lock's expiry (now if free), so that the
-- next waiter's deadline becomes what it would be had it queued first: never negative. Safe to run
-- twice: an owner not queued changes nothing.
local function rf_leave(queue, timeouts, owner, key, now)
  local score = tonumber(redis.call('ZSCORE', timeouts, owner))
  local list = redis.call('LRANGE', queue, 0, -1)
  local at = nil
  for i = 1, #list do
    if list[i] == owner then
      at = i
      break
    end
  end
  if at and score then
    local slot
    if at > 1 then
      slot = score - (tonumber(redis.call('ZSCORE', timeouts, list[at - 1])) or score)
    else
      slot = score - now - math.max(redis.call('PTTL', key), 0)
    end
    if slot > 0 then
      for j = at + 1, #list do
        redis.call('ZINCRBY', timeouts, -slot, list[j])
      end
    end
  end
  redis.call('ZREM', timeouts, owner)
  redis.call('LREM', queue, 0, owner)
end
