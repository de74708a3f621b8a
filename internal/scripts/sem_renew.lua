-- sem_renew.lua: extend the leases of many PermitExpirableSemaphore permits at once (the watchdog).
-- Format: sem_value.lua.
--
-- KEYS[1..n]  the leased permits of permit i (on Cluster all keys of one call are in one slot)
-- ARGV[1]     lease in ms; 0: check only, nothing is written (the tracker's read: internal/track)
-- ARGV[i+1]   permit i's id
--
-- returns     array of integers, one per permit: 1 renewed (or its lease already ends later); 0 it is
--             no longer leased (released, or
--             its lease passed: it is back in the pool, whether or not a script has counted it yet)
--             In check mode (lease 0) a held entry answers 1 + its time left (track_check.lua).
--
-- Safe to run twice: setting the same lease again changes nothing that matters.
local leaseMs = tonumber(ARGV[1])
local now = sem_now()
local out = {}
for i, leases in ipairs(KEYS) do
  out[i] = 0
  -- pcall: a key of another type must not fail the renewal of the whole batch.
  local ok, score = pcall(redis.call, 'ZSCORE', leases, ARGV[i + 1])
  if ok and score and tonumber(score) > now then
    -- GT: a renewal never shortens a lease (a longer one set by SetLease stands), so no lease ever
    -- ends sooner than the waiters were told (see sem_nudge).
    if leaseMs > 0 then
      redis.call('ZADD', leases, 'XX', 'GT', now + leaseMs, ARGV[i + 1])
      out[i] = 1
    else
      -- The earlier of the key's expiry and the lease's end, which changes no key.
      local left, ttl = tonumber(score) - now, redis.call('PTTL', leases)
      if ttl >= 0 then
        left = math.min(left, ttl)
      end
      out[i] = track_left(left)
    end
  end
end
return out
