-- compat_fair_force_unlock.lua: delete a FairLock in Java Redisson's RFairLock layout whoever holds
-- it (a Client made WithRedissonCompat; formats: compat_lock_value.lua, compat_fair_queue.lua), as
-- Redisson's forceUnlock does: purge the stale heads, delete the hash, and wake the head waiter (on
-- its own channel) if there was a lock to delete. The queue is left to the waiters.
--
-- KEYS[1]  lock key (the hash)
-- KEYS[2]  queue "redisson_lock_queue:{<key>}"
-- KEYS[3]  deadlines "redisson_lock_timeout:{<key>}"
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  the waiters' channel prefix "redisson_lock__channel:{<key>}"
-- ARGV[3]  now: the caller's clock, in milliseconds since the epoch
--
-- returns  1 if a held lock was deleted, 0 if there was none
--
-- NOT safe to run twice, and it keeps no record: a repeat would delete the lock of whoever acquired
-- it since. The client sends it once after an unknown outcome (see FairLock.ForceUnlock). A key of
-- another type is refused with WRONGTYPE and left untouched.
local key, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local publish, prefix, now = ARGV[1], ARGV[2], tonumber(ARGV[3])

local holder = rl_load(key)
if holder == false or not rf_typed(queue, timeouts) then
  return rl_wrong_type()
end
rf_purge(queue, timeouts, now)
if holder == nil then
  return 0
end
redis.call('DEL', key)
rf_notify_head(queue, publish, prefix)
return 1
