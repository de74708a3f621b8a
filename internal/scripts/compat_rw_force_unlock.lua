-- compat_rw_force_unlock.lua: delete a ReadWriteLock in Java Redisson's RReadWriteLock layout
-- whoever holds it, writer and readers (a Client made WithRedissonCompat; format:
-- compat_rw_value.lua), with the readers' acquisition keys, and publish "1" on its channel: every
-- waiting client, Java or Go, tries again. With a side, only in that side's mode, as Redisson's
-- readLock().forceUnlock() and writeLock().forceUnlock() do.
--
-- KEYS[1]  lock key (the hash)
-- KEYS[2]  the tag "{<key>}" of the read acquisitions' keys
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  the lock's channel "redisson_rwlock:{<key>}"
-- ARGV[3]  optional side: "" or absent, whatever the mode; "r" only in mode "read"; "x" only in
--          mode "write" (the writer's hold and the read holds it took beside it go)
--
-- returns  1 if a held lock was deleted, 0 if there was none (or it was in the other mode: nothing
--          changed)
--
-- NOT safe to run twice, and it keeps no record: a repeat would delete the lock of whoever acquired
-- it since. The client sends it once after an unknown outcome (see ReadWriteLock.ForceUnlock). A key
-- of another type, or a hash that is no Redisson read/write lock, is refused with WRONGTYPE and left
-- untouched. Redisson's read forceUnlock publishes "0", which wakes one waiting thread per Java
-- client; "1" wakes them all, which is a superset: every woken thread tries again.
local key, tag, publish, channel, side = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3] or ''

local s = rr_load(key)
if s == false then
  return rr_wrong_type()
elseif s.mode == nil or (side == 'r' and s.mode ~= 'read') or (side == 'x' and s.mode ~= 'write') then
  return 0
end
for owner, count in pairs(s.readers) do
  for n = 1, count do
    redis.call('DEL', rr_timeout(tag, owner, n))
  end
end
redis.call('DEL', key)
redis.call(publish, channel, 1)
return 1
