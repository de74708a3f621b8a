-- rw_renew.lua: extend the holds of many owners of ReadWriteLocks at once, or the registrations of
-- many waiting writers. Format: rw_value.lua.
--
-- KEYS[1..n] lock hashes (on Cluster all keys of one call are in one slot)
-- ARGV[1]     lease (or waiter timeout) in ms; 0 with "r" or "x": check only, nothing is written
--             (the tracker's read: see internal/track)
-- ARGV[2]     what: "r" reader holds, "x" writer holds, "ww" waiting writers, "wr" waiting readers
-- ARGV[i+2]   owner id of KEYS[i]
--
-- returns     array of integers, one per key: 1 renewed, 0 the owner no longer holds, or no longer
--             waits, or waits with nothing in its way any more (its holder's lease lapsed, a waiter
--             ahead of it died): nothing changed for it, and the waiter is to try again
--             In check mode (lease 0) a held entry answers 1 + its time left (track_check.lua).
--
-- Safe to run twice: setting the same time again changes nothing that matters.
local leaseMs, what = tonumber(ARGV[1]), ARGV[2]
local now = rw_now()
local out = {}
for i, key in ipairs(KEYS) do
  local owner = ARGV[i + 2]
  out[i] = 0
  -- pcall: a key recreated with another type must not fail the renewal of the whole batch.
  local ok, s = pcall(rw_load, key, now)
  if ok and s then
    if leaseMs == 0 then
      local h = (what == 'r' and s.readers[owner]) or (what == 'x' and s.writer and s.writer.owner == owner and s.writer)
      if h then
        -- The earlier of the key's expiry and the hold's own, which rw_load applies as it reads (no
        -- key change announces that one).
        local left = math.max(tonumber(h.expiry) - now, 0)
        local ttl = redis.call('PTTL', key)
        if ttl >= 0 then
          left = math.min(left, ttl)
        end
        out[i] = -track_left(left) -- negative: nothing to store
      end
    elseif what == 'r' and s.readers[owner] then
      local r = s.readers[owner]
      r.expiry = now + leaseMs
      redis.call('HSET', key, 'r:' .. owner, r.levels .. '|' .. r.expiry)
      out[i] = 1
    elseif what == 'x' and s.writer and s.writer.owner == owner then
      s.writer.expiry = now + leaseMs
      redis.call('HSET', key, 'w', owner .. '|' .. s.writer.levels .. '|' .. s.writer.expiry)
      out[i] = 1
    elseif (what == 'ww' and s.waiters[owner]) or (what == 'wr' and s.rwaiters[owner]) then
      local tbl, side = s.waiters, 'x'
      if what == 'wr' then
        tbl, side = s.rwaiters, 'r'
      end
      if rw_blocked(s, side, owner, '') then
        rw_wait(key, s, tbl, what .. ':', owner, now, leaseMs)
        out[i] = 1
      end
    end
    if out[i] == 1 then
      rw_store(key, now, s)
    elseif out[i] < 0 then
      out[i] = -out[i]
    end
  end
end
return out
