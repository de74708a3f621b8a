-- compat_lock_release.lua: release one level of a Lock in Java Redisson's RLock format (a Client made
-- WithRedissonCompat; format: compat_lock_value.lua) or the owner's whole hold, or undo an
-- acquisition whose outcome is unknown. A release that frees the lock deletes the key and publishes
-- "0" on the lock's channel, as Redisson's unlock does: every client waiting for it, Java or Go, is
-- woken and tries again.
--
-- KEYS[1]  lock key
-- KEYS[2]  the request's record: Redisson's unlock latch "redisson_unlock_latch:{<key>}:<request id>"
--          (any key of the lock's slot when ARGV[6] is 0)
-- ARGV[1]  owner id
-- ARGV[2]  "1": final release: the owner's client holds no other level, so the lock is freed
--          whatever count Redis holds (a re-sent re-entry may have counted twice); "0": one level
--          (the count goes down by one, but never below 1: the owner still holds the lock until its
--          final release); an undo is a final release
-- ARGV[3]  lease in milliseconds set by a partial release (0 keeps the TTL)
-- ARGV[4]  publish command: PUBLISH or SPUBLISH
-- ARGV[5]  the lock's channel: "redisson_lock__channel:{<key>}"; "": publish nothing (Redisson's
--          RSpinLock, whose waiters poll)
-- ARGV[6]  how long the record lives, in milliseconds (the waiter timeout); 0: keep no record (an
--          undo, which is safe to repeat as it is)
--
-- returns  0    the owner's hold is released: the key deleted, "0" published
--          1    partial release: one level less, the owner still holds the lock
--          -1   the owner does not hold the lock (lost, or an undone acquisition was never applied)
--
-- Safe to run twice: the first run that changes the lock records its answer in KEYS[2] (the client
-- deletes the record once it has the reply, as Redisson does), and a repeat returns it without
-- running again. A repeat that comes after the record is gone cannot take what is not the owner's:
-- a final release finds the owner gone (ids are never reused) and answers -1; a partial one takes at
-- most one level too many, never the last (the count stays at 1 or more), so the lock stays held
-- until the owner's final release. A key of another type, or a hash that is no Redisson lock, is
-- refused with WRONGTYPE before any write.
local key, record = KEYS[1], KEYS[2]
local owner, final, leaseMs = ARGV[1], ARGV[2], tonumber(ARGV[3])
local publish, channel, recordMs = ARGV[4], ARGV[5], tonumber(ARGV[6])

local done = rl_recorded(record, recordMs)
if done then
  return done
end
local holder, count = rl_load(key)
if holder == false then
  return rl_wrong_type()
end
if holder ~= owner then
  return -1
end
return rl_release(key, owner, count, final, leaseMs, record, recordMs, function()
  if channel ~= '' then
    redis.call(publish, channel, 0)
  end
end)
