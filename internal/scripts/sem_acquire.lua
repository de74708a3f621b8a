-- sem_acquire.lua: one attempt to take n permits of a Semaphore. Format: sem_value.lua.
--
-- KEYS[1]  the permits
-- KEYS[2]  the waiters hash
-- KEYS[3]  the acquisition's request record (see below)
-- KEYS[4]  the leased permits
-- ARGV[1]  the acquisition's id (its waiter id: "<client id>:<sequence>")
-- ARGV[2]  n, the permits wanted (≥ 1)
-- ARGV[3]  "f" one attempt; "w" a waiting attempt, which registers the waiter when it fails; "c" a
--          waiting attempt that registers nothing (WithRedissonCompat: Java Redisson's waiters queue
--          nowhere, and would not honour this package's queue)
-- ARGV[4]  the waiter timeout in ms (a registration lasts that long without a heartbeat, and the
--          request record that long, unless ARGV[5] applies)
-- ARGV[5]  the late-copy bound in ms: how long the request record lasts once a copy of the
--          acquisition may still be travelling (below)
-- ARGV[6]  lease in ms of each permit taken (PermitExpirableSemaphore: the permits ARGV[12..11+n]
--          are leased until now + lease), or 0: plain permits
-- ARGV[7]  publish command, ARGV[8] wake channel prefix: expired leases that came back may let
--          waiters through (see sem_wake)
-- ARGV[9]  "1" if this copy is a re-send after an unknown outcome (see send.go), else "0"
-- ARGV[10] Java Redisson's channel of the semaphore, or "" (see sem_announce): expired leases that
--          came back are announced there, as Redisson's acquire does
-- ARGV[11] how long in ms the record "a" of plain permits taken lasts at least (no shorter than
--          ARGV[4]): the undo of an acquisition whose reply was lost gives them back only while it
--          lives (below)
-- ARGV[12…] leased permits: the n permit ids, fixed for the acquisition (the Go side makes them:
--          "<id>#<i>", or in the Redisson-compatible layout 16 random bytes each)
--
-- returns  {1, 0, left} the permits were taken (left: leased permits, ms left of their lease, which
--          a repeat answering for an earlier copy may find shorter than ARGV[6], or ≤ 0 if they
--          are no longer leased; plain permits, 0); {0, ticket, next} not now (ticket: the waiter's place if
--          the attempt registered it, else 0; next: ms until the earliest leased permit expires or
--          the registration of a waiter ahead lapses, -1 none); {-1, 0, 0} the acquisition was undone
--          already (a late copy, or of a single attempt that failed); an UNKNOWN error: a re-send
--          that finds no trace of the first copy (below)
--
-- Safe to run twice. An attempt that takes permits records "a", and a repeat finds it and answers 1
-- without taking more: plain permits are a counter, which cannot tell; leased permits may have been
-- released (all or some) before a copy still travelling lands, so their ids in the lease set cannot
-- tell either (such a copy, of a waiting attempt whose re-send took the permits, would take them
-- again and lease ids the holder holds or released: permits lost for good). A repeat that finds
-- the first permit id (ARGV[12]) still leased answers 1 too. Nothing in the state tells a late copy of a single attempt ("f") that failed, or of an
-- undone acquisition, from a new attempt: the failed attempt, and the undo (sem_release.lua),
-- record "u", and such a copy finds it and takes nothing. A waiting attempt in mode "c", which
-- registers nothing, records "c" when it takes nothing: the trace a re-send of it looks for (as a
-- registration is in mode "w"; a later copy of the acquisition may still take the permits, and
-- records "a" then). Records last the waiter timeout (an "a" of plain permits at least ARGV[11]),
-- except where a copy may still be travelling:
-- a re-sent copy (ARGV[9]) proves that the first copy of its attempt may land at any time, even
-- after the acquisition ended, and a record kept only the waiter timeout would be gone by then
-- (the copy would take permits for nobody: plain permits for good). So a re-sent copy makes the
-- record it finds, or writes, last the late-copy bound (ARGV[5]); one of a waiting attempt in mode
-- "w" that takes nothing records "r" for that (the registration stays the trace); and every later
-- record of the acquisition (an "a", the undo's "u", see sem_release.lua) keeps what the record
-- has left if that is longer (sem_kept). The undo of an acquisition whose outcome is unknown
-- writes its "u" for the late-copy bound too. A copy that lands after the bound, or before any
-- record and after the acquisition's process died, is not recognised. A
-- re-send (ARGV[9]) that finds no trace of the first copy (no record, no leased permit, no
-- registration) takes nothing and answers UNKNOWN: the first copy may never have run, may still
-- be travelling, or may have run longer ago than its record lives; the client then undoes the
-- acquisition, which records "u" for a copy landing later. So no copy takes permits twice. The
-- undo of plain permits gives them back only if it finds the "a" record (sem_release.lua): it is
-- sent once the wait has ended, and re-sent after its own lost copies, so it may land well after a
-- short waiter timeout; the "a" of plain permits lasts ARGV[11] for it. An undo reaching Redis
-- after that record expired finds nothing to give back. A repeated registration keeps its ticket.
local key, waiters, record, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, n, mode, waiterMs, lateMs = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local leaseMs, publish, wakePrefix = tonumber(ARGV[6]), ARGV[7], ARGV[8]
local resent = ARGV[9] == '1'
local done = redis.call('GET', record)
-- A re-sent copy: the first copy of its attempt may still be travelling (see above).
local keepMs = sem_kept(record, resent and lateMs or waiterMs)
if resent and done then
  redis.call('PEXPIRE', record, keepMs)
end
-- A repeat answering for the copy that leased the permits tells how long their lease has left: that
-- copy may have run well before this one was sent (a late copy of an earlier attempt of a waiting
-- acquisition), and the holder must not count the lease from this one.
if done == 'u' then -- the other records of an acquisition: "a", "c", "r"
  return {-1, 0, 0}
end
local taken = leaseMs > 0 and redis.call('ZSCORE', leases, ARGV[12])
if taken then
  return {1, 0, tonumber(taken) - sem_now()}
elseif done == 'a' then
  return {1, 0, leaseMs > 0 and -1 or 0}
end
local now, st, err = sem_open(key, waiters, leases)
if not st then
  return err
end
local permits, back, list, byID, seq = st.permits, st.back, st.list, st.byID, st.seq
local mine = byID[id]
if resent and not mine and done ~= 'c' then
  return redis.error_reply('UNKNOWN the first copy of this acquisition left no trace')
end
if permits - sem_ahead(list, mine and mine.ticket) >= n then
  local first = sem_first(leases)
  permits = redis.call('DECRBY', key, n)
  if leaseMs > 0 then
    local args = {}
    for i = 12, 11 + n do -- n ≤ 1000 for leased permits (the Go side checks)
      args[#args + 1] = now + leaseMs
      args[#args + 1] = ARGV[i]
    end
    redis.call('ZADD', leases, unpack(args))
  end
  -- Plain permits: the undo's only trace of them (a lost reply's undo may land late).
  redis.call('SET', record, 'a', 'PX', leaseMs > 0 and keepMs or math.max(keepMs, tonumber(ARGV[11])))
  sem_remove(waiters, list, byID, id)
  sem_keep(waiters, list, now)
  if back > 0 then
    sem_wake(list, permits, publish, wakePrefix)
    sem_announce(publish, ARGV[10], permits)
  end
  if leaseMs > 0 and (not first or now + leaseMs < first) then
    sem_nudge(list, publish, wakePrefix) -- the waiters' retry times end later than this lease
  end
  return {1, 0, leaseMs}
end
if back > 0 then
  sem_wake(list, permits, publish, wakePrefix)
  sem_announce(publish, ARGV[10], permits)
end
-- Try again when the first lease ends, or the registration of a waiter ahead lapses (a waiter that
-- died stops holding this one up then, even if this Client's heartbeats are far apart).
local retry = sem_next(leases, now)
for _, w in ipairs(list) do
  if mine and w.ticket >= mine.ticket then
    break
  end
  if retry < 0 or w.deadline - now < retry then
    retry = math.max(w.deadline - now, 1)
  end
end
if mode == 'f' then
  -- A single attempt that failed is over: a copy of it landing later must take nothing.
  redis.call('SET', record, 'u', 'PX', keepMs)
  return {0, 0, retry}
elseif mode == 'c' then
  -- The wait goes on: a later copy may take the permits for it (its record then answers the next
  -- attempt); if the wait ends, its undo records "u" for any copy still travelling. "c" tells a
  -- re-send of this attempt that it ran and took nothing.
  redis.call('SET', record, 'c', 'PX', keepMs)
  return {0, 0, retry}
end
if not mine then
  if seq == 0 then
    seq = now * 1000
    redis.call('HSET', waiters, 'seq', string.format('%d', seq))
  end
  mine = {id = id, ticket = redis.call('HINCRBY', waiters, 'seq', 1), n = n}
  list[#list + 1] = mine
end
mine.deadline = now + waiterMs
redis.call('HSET', waiters, id, string.format('%d|%d|%d', mine.ticket, n, mine.deadline))
sem_keep(waiters, list, now)
if resent then
  -- The first copy of this attempt may land after the wait ended: its undo's "u" must outlive it.
  redis.call('SET', record, 'r', 'PX', keepMs)
end
return {0, mine.ticket, retry}
