-- compat_lock_renew.lua: extend the TTL of many watchdog Locks in Java Redisson's RLock format in one
-- call (a Client made WithRedissonCompat; format: compat_lock_value.lua), as Redisson's watchdog does.
--
-- KEYS[1..n] lock keys (on Cluster all keys of one call are in one slot)
-- ARGV[1]     lease in milliseconds; 0: check only, nothing is written (the tracker's read: see
--             internal/track)
-- ARGV[i+1]   owner id expected to hold KEYS[i]
--
-- returns     array of integers, one per key: 1 renewed, 0 the owner no longer holds it (nothing changed)
--             In check mode (lease 0) a held entry answers 1 + its time left (track_check.lua).
--
-- Safe to run twice: PEXPIRE to the same lease is idempotent.
local leaseMs = ARGV[1]
local out = {}
for i, key in ipairs(KEYS) do
  -- pcall: a key recreated with another type must not fail the renewal of the whole batch.
  local ok, holder = pcall(rl_load, key)
  if ok and holder == ARGV[i + 1] then
    if leaseMs ~= '0' then
      redis.call('PEXPIRE', key, leaseMs)
      out[i] = 1
    else
      out[i] = track_left(redis.call('PTTL', key))
    end
  else
    out[i] = 0
  end
end
return out
