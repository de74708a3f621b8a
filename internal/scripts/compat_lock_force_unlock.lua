-- compat_lock_force_unlock.lua: delete a Lock in Java Redisson's RLock format whoever holds it (a
-- Client made WithRedissonCompat; format: compat_lock_value.lua) and publish "0" on its channel, as
-- Redisson's forceUnlock does: every waiting client, Java or Go, is woken.
--
-- KEYS[1]  lock key
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  the lock's channel: "redisson_lock__channel:{<key>}"; "": publish nothing (Redisson's
--          RSpinLock, whose forceUnlock only deletes)
--
-- returns  1 if a held lock was deleted, 0 if there was none
--
-- NOT safe to run twice, and it keeps no record: a repeat would delete the lock of whoever acquired
-- it since. The client sends it once after an unknown outcome (see Lock.ForceUnlock). A key of
-- another type, or a hash that is no Redisson lock, is refused with WRONGTYPE and left untouched.
local key, publish, channel = KEYS[1], ARGV[1], ARGV[2]

local holder = rl_load(key)
if holder == false then
  return rl_wrong_type()
elseif holder == nil then
  return 0
end
redis.call('DEL', key)
if channel ~= '' then
  redis.call(publish, channel, 0)
end
return 1
