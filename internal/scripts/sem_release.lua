-- sem_release.lua: every other change of a Semaphore's permits, and the end of a wait. Format:
-- sem_value.lua.
--
-- KEYS[1]  the permits
-- KEYS[2]  the waiters hash
-- KEYS[3]  the request's record (see below)
-- KEYS[4]  the leased permits
-- ARGV[1]  what: "r" release n; "a" add n (may be negative); "d" drain (take all available);
--          "s" set the permits to n if they are not set; "u" undo acquisition ARGV[6] of n permits
--          (give them back if it took them; leave the waiters either way); "x" release the leased
--          permits ARGV[10..] (all or none); "e" extend the leases of the permits ARGV[10..] to n ms
--          from now; "q" the ms left of the lease of permit ARGV[10], or without one the permits
-- ARGV[2]  n
-- ARGV[3]  publish command: PUBLISH or SPUBLISH
-- ARGV[4]  wake channel prefix: a waiter is woken on "<prefix><its client id>"
-- ARGV[5]  ms to keep the request record: the waiter timeout; "u" after an acquisition whose
--          outcome is unknown (its first copy may still be travelling), the late-copy bound
-- ARGV[6]  "u": the acquisition's id (its waiter id)
-- ARGV[7]  "u": "1" if the acquisition leased its permits (then only those still leased come back)
-- ARGV[8]  "1" if this copy is a re-send after an unknown outcome (see send.go), else "0"
-- ARGV[9]  Java Redisson's channel of the semaphore, or "" (see sem_announce)
-- ARGV[10…] "x", "e", "q": permit ids; "u" of leased permits: the acquisition's n permit ids
--
-- returns  "r", "a", "x": the permits available after it ("x": -1 if a permit is not leased, or its
--          lease passed: nothing released); "d": the permits drained; "s": 1 set, 0 they were set
--          already; "u": the permits given back; "e": how many leases were extended; "q": ms left, -1
--          if the permit is not leased, -2 if its lease never ends (a Java Redisson permit taken
--          without a lease: score sem_never), or the permits available (expired leases counted back); an
--          UNKNOWN error: a re-send of a recorded request that finds no record (below)
--
-- Expired leases come back first (sem_reclaim). After any change, the waiters whose wants now fit
-- are woken (see sem_wake). Safe to run twice: a repeat finds the request's record and answers what
-- the first run answered, changing nothing; a re-send (ARGV[8]) that finds no record applies nothing
-- and answers UNKNOWN (WRONGTYPE if the name holds another kind: the first copy was refused too) (the first copy may never have run, may still be travelling, or may have run
-- longer ago than its record lives), so no copy applies twice; but a re-sent "x" that finds every
-- permit still leased releases them (permit ids are never reused: the first copy, if it lands
-- later, finds this one's record, or the permits gone). "e" and "q" keep no record: they are
-- idempotent; nor does the undo need one to be repeated (it gives back only what the acquisition's
-- record, or the lease set, says was taken). The
-- others keep one, for the waiter timeout, because the permits are a counter with no identity ("r",
-- "a", "d", "s"), because the answer cannot be read back from the state ("x": all or none, and the
-- permits after it), or, for the undo ("u"), so that a late copy of the acquisition takes nothing
-- (an undo of leased permits gives back the acquisition's ids still in the lease set; one of plain
-- permits, n if the acquisition's record says it took them). Records last the waiter timeout; the
-- undo's "u" lasts ARGV[5], or what the acquisition's record has left if that is longer (a re-sent
-- copy made it outlive the late copies: see sem_acquire.lua), so that a copy of the acquisition
-- landing within the late-copy bound takes nothing. The undo of plain permits reads the
-- acquisition's record ("a": it took them), which lasts the waiter timeout and at least what the
-- acquisition asked for it (sem_acquire.lua's ARGV[11]), unless made to last longer: an undo that
-- reaches Redis later (Redis unreachable for about that long after the copy that took them ran)
-- finds none and gives nothing back.
local key, waiters, record, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local what, n, publish, wakePrefix, keepMs, id = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
local done = redis.call('GET', record)
if done and what ~= 'u' then
  return tonumber(done)
end
local resent = not done and ARGV[8] == '1'
if resent and what ~= 'u' and what ~= 'e' and what ~= 'q' and what ~= 'x' then
  -- A name holding another kind refused the first copy as it refuses this one (read only).
  local _, terr = sem_permits(key)
  if terr then
    return terr
  end
  return redis.error_reply('UNKNOWN the first copy of this request left no record')
end
local now, st, err = sem_open(key, waiters, leases)
if not st then
  return err
end
local permits, list, byID = st.permits, st.list, st.byID
if st.back > 0 then
  sem_wake(list, permits, publish, wakePrefix)
  sem_announce(publish, ARGV[9], permits) -- as Redisson's reclaim does
end
local pids = {}
for i = 10, #ARGV do
  pids[#pids + 1] = ARGV[i]
end
local out
if what == 'q' then
  if not pids[1] then
    return permits
  end
  local score = redis.call('ZSCORE', leases, pids[1])
  if not score then
    return -1
  elseif tonumber(score) >= sem_never then
    return -2
  end
  return tonumber(score) - now
elseif what == 'e' then
  out = 0
  local first = sem_first(leases)
  for _, pid in ipairs(pids) do
    if redis.call('ZSCORE', leases, pid) then
      redis.call('ZADD', leases, 'XX', now + n, pid)
      out = out + 1
    end
  end
  if out > 0 and now + n < (first or math.huge) then
    sem_nudge(list, publish, wakePrefix) -- a lease now ends before the waiters' retry times
  end
  return out
elseif what == 'x' then
  out = -1
  local held = true
  for _, pid in ipairs(pids) do
    if not redis.call('ZSCORE', leases, pid) then
      held = false
    end
  end
  if resent and not held then
    -- Released by the first copy, or refused: nothing tells which.
    return redis.error_reply('UNKNOWN the first copy of this request left no record')
  end
  if held and #pids > 0 then
    local removed = redis.call('ZREM', leases, unpack(pids)) -- the Go side refuses repeated ids
    permits = sem_give(key, permits, removed)
    out = permits
  end
elseif what == 'r' or what == 'a' then
  local berr = sem_bound(permits + n)
  if berr then
    return berr
  end
  permits = redis.call('INCRBY', key, n)
  out = permits
elseif what == 'd' then
  out = math.max(permits, 0)
  if out > 0 then
    permits = redis.call('DECRBY', key, out)
  end
elseif what == 's' then
  out = redis.call('SET', key, n, 'NX') and 1 or 0
  if out == 1 then
    permits = n
  end
else -- 'u'
  out = 0
  if ARGV[7] == '1' then
    out = redis.call('ZREM', leases, unpack(pids))
  elseif done == 'a' then
    out = n
  end
  if out > 0 then
    permits = sem_give(key, permits, out)
  end
  sem_remove(waiters, list, byID, id)
  redis.call('SET', record, 'u', 'PX', sem_kept(record, keepMs))
  sem_keep(waiters, list, now)
  sem_wake(list, permits, publish, wakePrefix)
  if out > 0 then
    sem_announce(publish, ARGV[9], permits)
  end
  return out
end
redis.call('SET', record, out, 'PX', keepMs)
sem_wake(list, permits, publish, wakePrefix)
if what ~= 'd' and not (what == 's' and out == 0) and not (what == 'a' and n <= 0) then
  sem_announce(publish, ARGV[9], permits)
end
return out
