-- rw_force_unlock.lua: delete a ReadWriteLock's holds whoever holds them (the writer and every
-- reader; waiting writers stay registered) and wake every waiter, or only while one side holds it.
-- Format: rw_value.lua.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  the lock's wake-up channel prefix (see rw_grant)
-- ARGV[3]  the client's waiter timeout in ms: the reservation of a hold given to a waiter whose
--          registration does not name its own timeout (see rw_grant in rw_value.lua)
-- ARGV[4]  optional side: "" or absent, whoever holds it; "x" only if a writer holds it (its hold
--          and the read holds it took beside it go); "r" only if readers hold it and no writer does
--          (Redisson's read and write forceUnlock, which act only in their own mode)
--
-- returns  1 if holders were removed, 0 if nobody held it (or not that side: nothing changed)
--
-- NOT safe to run twice, and it keeps no record: a repeat would delete the holds acquired since, and
-- nothing in the lock's state tells a repeat from a new request. The client sends it once after an
-- unknown outcome (see lock_force_unlock.lua).
local key = KEYS[1]
local publish, wakePrefix, reserveMs, side = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] or ''
local now = rw_now()
local s, err = rw_load(key, now)
if not s then
  return err
end
if (not s.writer and s.nreaders == 0) or (side == 'x' and not s.writer) or (side == 'r' and s.writer) then
  return 0
end
local fields = {}
if s.writer then
  fields[#fields + 1] = 'w'
end
for owner in pairs(s.readers) do
  fields[#fields + 1] = 'r:' .. owner
end
redis.call('HDEL', key, unpack(fields))
s.writer, s.readers, s.nreaders = nil, {}, 0
rw_grant(key, s, now, reserveMs, publish, wakePrefix)
rw_store(key, now, s)
return 1
