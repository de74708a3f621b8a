-- compat_rw_renew.lua: extend many holds of ReadWriteLocks in Java Redisson's RReadWriteLock layout
-- in one call (a Client made WithRedissonCompat; format: compat_rw_value.lua), as Redisson's
-- watchdog does: a writer as its LockTask (the hash's TTL to the lease while "<owner>:write" is in
-- it), a reader as its ReadLockTask (each of the owner's acquisition keys 1..count to the lease,
-- then the hash). The hash's TTL is never cut below another holder's (see rr_expire).
--
-- KEYS[1]    lock hash of the first entry, KEYS[2] its tag "{<key>}"; KEYS[2i-1], KEYS[2i] those
--            of entry i (on Cluster all keys of one call are in one slot)
-- ARGV[1]    lease in milliseconds; 0: check only, nothing is written (internal/track)
-- ARGV[2]    side: "r" read holds, "x" write holds
-- ARGV[i+2]  owner id of entry i
--
-- returns    array of integers, one per entry: 1 renewed, 0 the owner no longer holds its side
--            (nothing changed)
--             In check mode (lease 0) a held entry answers 1 + its time left (track_check.lua).
--
-- Safe to run twice: PEXPIRE to the same lease is idempotent.
local leaseMs, side = tonumber(ARGV[1]), ARGV[2]
local out = {}
for i = 1, #KEYS / 2 do
  local key, tag, owner = KEYS[2 * i - 1], KEYS[2 * i], ARGV[i + 2]
  out[i] = 0
  -- pcall: a key recreated with another type must not fail the renewal of the whole batch.
  local ok, s = pcall(rr_load, key)
  if ok and s then
    if leaseMs == 0 then
      if (side == 'x' and s.writer == owner) or (side == 'r' and s.readers[owner]) then
        out[i] = track_left(redis.call('PTTL', key))
      end
    elseif side == 'x' and s.writer == owner then
      rr_expire(key, tag, s, leaseMs)
      out[i] = 1
    elseif side == 'r' and s.readers[owner] then
      for n = 1, s.readers[owner] do
        redis.call('PEXPIRE', rr_timeout(tag, owner, n), leaseMs)
      end
      rr_expire(key, tag, s, leaseMs)
      out[i] = 1
    end
  end
end
return out
