-- sem_beat.lua: keep many Semaphore waiters alive in one call (the renewal scheduler's heartbeat).
-- Format: sem_value.lua.
--
-- KEYS[1..3n]  for waiter i, KEYS[3i-2] its permits key, KEYS[3i-1] its waiters hash and KEYS[3i]
--               its leased permits (on Cluster all keys of one call are in one slot)
-- ARGV[1]      waiter timeout in ms
-- ARGV[i+1]    waiter i's id
--
-- returns  array of integers, one per waiter: 1 still waiting, its deadline moved; 0 the waiter is
--          to try again: it is no longer registered, or its wants fit now (a wake-up may have been
--          lost); nothing changed for it
--
-- Safe to run twice: moving a deadline again changes nothing that matters.
local timeoutMs = tonumber(ARGV[1])
local now = sem_now()
local out = {}
for i = 1, #ARGV - 1 do
  local key, waiters, leases, id = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i], ARGV[i + 1]
  out[i] = 0
  -- pcall: a key of another type must not fail the heartbeat of the whole batch.
  local ok, permits = pcall(sem_permits, key)
  local lok, list, byID = pcall(sem_load, waiters, now)
  local ty = redis.call('TYPE', leases).ok
  if ok and permits and lok and list and (ty == 'zset' or ty == 'none') then
    permits = sem_reclaim(key, leases, permits, now)
    local w = byID[id]
    if w and permits - sem_ahead(list, w.ticket) < w.n then
      w.deadline = now + timeoutMs
      redis.call('HSET', waiters, id, string.format('%d|%d|%d', w.ticket, w.n, w.deadline))
      sem_keep(waiters, list, now)
      out[i] = 1
    end
  end
end
return out
