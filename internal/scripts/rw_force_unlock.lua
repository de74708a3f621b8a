-- rw_force_unlock.lua: delete a ReadWriteLock whoever holds it (the writer and every reader; waiting
-- writers stay registered) and wake every waiter. Format: rw_value.lua.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  publish command: PUBLISH or SPUBLISH
-- ARGV[2]  the lock's wake-up channel
--
-- returns  1 if a holder was removed, 0 if nobody held it
--
-- Safe to run twice: a repeat finds nobody and answers 0 (the first answer is what counted).
local key = KEYS[1]
local publish, channel = ARGV[1], ARGV[2]
local now = rw_now()
local s, err = rw_load(key, now)
if not s then
  return err
end
if not s.writer and s.nreaders == 0 then
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
rw_store(key, now, s)
redis.call(publish, channel, '*')
return 1
