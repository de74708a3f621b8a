-- compat_fair_release.lua: release one level of a FairLock in Java Redisson's RFairLock layout (a
-- Client made WithRedissonCompat; formats: compat_lock_value.lua, compat_fair_queue.lua) or the
-- owner's whole hold, or undo an acquisition whose outcome is unknown or a wait that ended. As
-- Redisson's unlock does, it purges the stale heads, and a release that frees the lock deletes the
-- hash and publishes "0" on the head waiter's own channel only: that waiter, Java or Go, tries again
-- and takes the lock. A release that finds the lock gone wakes the head too (Redisson does).
--
-- KEYS[1]  lock key (the hash)
-- KEYS[2]  queue "redisson_lock_queue:{<key>}"
-- KEYS[3]  deadlines "redisson_lock_timeout:{<key>}"
-- KEYS[4]  the request's record: Redisson's unlock latch "redisson_unlock_latch:{<key>}:<request id>"
--          (any key of the lock's slot when ARGV[6] is 0)
-- ARGV[1]  owner id
-- ARGV[2]  "1": final release (the lock is freed whatever count Redis holds); "0": one level (the
--          count goes down by one, never below 1); an undo is a final release
-- ARGV[3]  lease in milliseconds set by a partial release (0 keeps the TTL)
-- ARGV[4]  publish command: PUBLISH or SPUBLISH
-- ARGV[5]  the waiters' channel prefix "redisson_lock__channel:{<key>}" (a waiter's is
--          prefix:<owner>)
-- ARGV[6]  how long the record lives, in milliseconds (the waiter timeout); 0: an undo, which keeps
--          no record and also takes the owner out of the queue (Redisson's acquireFailed)
-- ARGV[7]  now: the caller's clock, in milliseconds since the epoch
--
-- returns  0    the owner's hold is released: the hash deleted, the head woken
--          1    partial release: one level less, the owner still holds the lock
--          -1   the owner does not hold the lock (an undo: whatever it held or queued is gone)
--
-- Safe to run twice, as compat_lock_release.lua: the first run that changes the lock records its
-- answer in KEYS[4], which answers a repeat; without the record a final release finds the owner
-- gone (ids are never reused) and a partial one never takes the last level; an undo is safe to
-- repeat as it is (an owner not queued leaves nothing). A key of another type is refused with
-- WRONGTYPE before any write.
local key, queue, timeouts, record = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, final, leaseMs = ARGV[1], ARGV[2], tonumber(ARGV[3])
local publish, prefix, recordMs, now = ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])

local done = rl_recorded(record, recordMs)
if done then
  return done
end
local holder, count = rl_load(key)
if holder == false or not rf_typed(queue, timeouts) then
  return rl_wrong_type()
end
rf_purge(queue, timeouts, now)
if recordMs == 0 then
  rf_leave(queue, timeouts, owner, key, now)
end
if holder ~= owner then
  if holder == nil then
    rf_notify_head(queue, publish, prefix)
  end
  return -1
end
return rl_release(key, owner, count, final, leaseMs, record, recordMs, function()
  rf_notify_head(queue, publish, prefix)
end)
