-- rw_force_unlock.lua: delete a ReadWriteLock whoever holds it (the writer and every reader; waiting
-- writers stay registered) and wake every waiter. Format: rw_value.lua.
--
-- KEYS[1]  the lock hash
-- KEYS[2]  where this request records its outcome ("1" or "0"), kept ARGV[3] ms
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  the lock's wake-up channel prefix (see rw_grant)
-- ARGV[3]  ms to keep the outcome
-- ARGV[4]  the client's waiter timeout in ms: the reservation of a hold given to a waiter whose
--          registration does not name its own timeout (see rw_grant in rw_value.lua)
--
-- returns  1 if a holder was removed, 0 if nobody held it
--
-- Safe to run twice: a repeat finds the recorded outcome and answers it, without deleting holds
-- acquired since.
local key, outcome = KEYS[1], KEYS[2]
local publish, wakePrefix, keepMs, reserveMs = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local done = redis.call('GET', outcome)
if done then
  return tonumber(done)
end
local now = rw_now()
local s, err = rw_load(key, now)
if not s then
  return err
end
if not s.writer and s.nreaders == 0 then
  redis.call('SET', outcome, '0', 'PX', math.max(keepMs, 1))
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
redis.call('SET', outcome, '1', 'PX', math.max(keepMs, 1))
return 1
