-- lock_renew.lua: Redisson LockTask renewal pass over one chunk of exclusive locks (reference §2).
--
-- KEYS[i]    the lock HASH of lock i (all KEYS in one slot on a Cluster)
-- ARGV[1]    lockWatchdogTimeout in ms
-- ARGV[i+1]  the owner field of lock i (its first registered thread)
--
-- returns  an array: 1 for each lock whose owner field exists (TTL set to the watchdog timeout),
--          0 for each lock no longer owned (left untouched)
--
-- Safe to run twice: PEXPIRE to the same value.
local out = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
