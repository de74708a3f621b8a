-- wait_beat.lua: keep many queued waiters alive in one call (the renewal scheduler's heartbeat).
-- Formats: wait_queue.lua.
--
-- KEYS[1..2n] KEYS[2i-1] the q key of waiter i's queue, KEYS[2i] its qt key (on Cluster all keys of one call are
--            in one slot)
-- ARGV[1]     waiter timeout in milliseconds: each live waiter's deadline becomes now + timeout, and
--             its queue's keys live at least two timeouts more
-- ARGV[i+1]   waiter i's id
--
-- returns     array of integers, one per waiter: 1 still queued (deadline moved), 0 no longer queued
--             (served, evicted, or it left): nothing changed
--
-- Safe to run twice: setting a deadline again changes nothing but the deadline.
local nowMs = queue_now()
local timeoutMs = tonumber(ARGV[1])
local out = {}
for i = 1, #ARGV - 1 do
  local q, qt, id = KEYS[2 * i - 1], KEYS[2 * i], ARGV[i + 1]
  -- pcall: a key of another type must not fail the heartbeat of the whole batch.
  local score = redis.pcall('ZSCORE', qt, id)
  if type(score) == 'string' and tonumber(score) > nowMs then
    redis.call('ZADD', qt, 'XX', nowMs + timeoutMs, id)
    queue_keep(q, qt, timeoutMs)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
