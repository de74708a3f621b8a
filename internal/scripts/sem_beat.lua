-- sem_beat.lua: keep many Semaphore waiters alive in one call (the renewal scheduler's heartbeat).
-- Format: sem_value.lua.
--
-- KEYS[1..2n]  for waiter i, KEYS[2i-1] its permits key and KEYS[2i] its waiters hash (on Cluster
--               all keys of one call are in one slot)
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
  local key, waiters, id = KEYS[2 * i - 1], KEYS[2 * i], ARGV[i + 1]
  out[i] = 0
  -- pcall: a key of another type must not fail the heartbeat of the whole batch.
  local ok, permits = pcall(sem_permits, key)
  local lok, list, byID = pcall(sem_load, waiters, now)
  if ok and permits and lok and list then
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
