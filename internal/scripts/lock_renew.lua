-- lock_renew.lua: extend the TTL of many watchdog locks in one call.
--
-- KEYS[1..n] lock hashes (on Cluster all keys of one call are in one slot)
-- ARGV[1]     lease in milliseconds
-- ARGV[i+1]   owner id expected to hold KEYS[i]
--
-- returns     array of integers, one per key: 1 renewed, 0 the owner no longer holds it (nothing changed)
--
-- Safe to run twice: PEXPIRE to the same lease is idempotent.
local leaseMs = ARGV[1]
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('HEXISTS', key, ARGV[i + 1]) == 1 then
    redis.call('PEXPIRE', key, leaseMs)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
