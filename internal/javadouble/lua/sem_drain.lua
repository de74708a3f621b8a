-- sem_drain.lua: Redisson Semaphore drainPermits (reference §9).
--
-- KEYS[1]  the permit count
--
-- returns  the count before (0 if no key; then nothing is written)
--
-- Not safe to run twice in meaning (the repeat returns 0), harmless to the state.
local value = redis.call('get', KEYS[1])
if value == false then
  return 0
end
redis.call('set', KEYS[1], 0)
return tonumber(value)
