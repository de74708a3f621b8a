-- sem_release.lua: every other change of a Semaphore's permits, and the end of a wait. Format:
-- sem_value.lua.
--
-- KEYS[1]  the permits
-- KEYS[2]  the waiters hash
-- KEYS[3]  the request's record
-- ARGV[1]  what: "r" release n; "a" add n (may be negative); "d" drain (take all available);
--          "s" set the permits to n if they are not set; "u" undo acquisition ARGV[6] of n permits
--          (give them back if it took them; leave the waiters either way)
-- ARGV[2]  n
-- ARGV[3]  publish command: PUBLISH or SPUBLISH
-- ARGV[4]  wake channel prefix: a waiter is woken on "<prefix><its client id>"
-- ARGV[5]  ms to keep the request record (the re-send window)
-- ARGV[6]  "u": the acquisition's id (its waiter id)
--
-- returns  "r", "a": the permits available after it; "d": the permits drained; "s": 1 set, 0 they
--          were set already; "u": n given back, 0 nothing was taken
--
-- After any change, the waiters whose wants now fit are woken (see sem_wake). Safe to run twice: a
-- repeat finds the request's record and answers what the first run answered, changing nothing.
local key, waiters, record = KEYS[1], KEYS[2], KEYS[3]
local what, n, publish, wakePrefix, keepMs, id = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
local done = redis.call('GET', record)
if done and what ~= 'u' then
  return tonumber(done)
end
local now = sem_now()
local permits, err = sem_permits(key)
if not permits then
  return err
end
local list, byID, _, lerr = sem_load(waiters, now)
if not list then
  return lerr
end
local out
if what == 'r' or what == 'a' then
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
  if done == 'a' then
    permits = redis.call('INCRBY', key, n)
    out = n
  end
  sem_remove(waiters, list, byID, id)
  redis.call('SET', record, 'u', 'PX', keepMs)
  sem_keep(waiters, list, now)
  sem_wake(list, permits, publish, wakePrefix)
  return out
end
redis.call('SET', record, out, 'PX', keepMs)
sem_wake(list, permits, publish, wakePrefix)
return out
