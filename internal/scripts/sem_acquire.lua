-- sem_acquire.lua: one attempt to take n permits of a Semaphore. Format: sem_value.lua.
--
-- KEYS[1]  the permits
-- KEYS[2]  the waiters hash
-- KEYS[3]  the acquisition's request record
-- ARGV[1]  the acquisition's id (its waiter id: "<client id>:<sequence>")
-- ARGV[2]  n, the permits wanted (≥ 1)
-- ARGV[3]  "f" one attempt; "w" a waiting attempt, which registers the waiter when it fails
-- ARGV[4]  the waiter timeout in ms (a registration lasts that long without a heartbeat)
-- ARGV[5]  ms to keep the request record (the re-send window)
--
-- returns  {1, 0} the permits were taken; {0, ticket} not now (ticket: the waiter's place if the
--          attempt registered it, else 0); {-1, 0} the acquisition was undone already (a late copy)
--
-- Safe to run twice: a repeat of an attempt that took the permits finds its record "a" and answers 1
-- without taking more; a copy landing after the undo finds "u" and takes nothing; a repeated
-- registration keeps its ticket.
local key, waiters, record = KEYS[1], KEYS[2], KEYS[3]
local id, n, mode, waiterMs, keepMs = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local done = redis.call('GET', record)
if done == 'a' then
  return {1, 0}
elseif done then
  return {-1, 0}
end
local now = sem_now()
local permits, err = sem_permits(key)
if not permits then
  return err
end
local list, byID, seq, lerr = sem_load(waiters, now)
if not list then
  return lerr
end
local mine = byID[id]
if permits - sem_ahead(list, mine and mine.ticket) >= n then
  redis.call('DECRBY', key, n)
  redis.call('SET', record, 'a', 'PX', keepMs)
  sem_remove(waiters, list, byID, id)
  sem_keep(waiters, list, now)
  return {1, 0}
end
if mode ~= 'w' then
  return {0, 0}
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
return {0, mine.ticket}
