-- wait_beat.lua: keep many queued waiters alive in one call (the renewal scheduler's heartbeat).
-- Formats: wait_queue.lua.
--
-- KEYS[1..n] the qt key of each waiter's queue (on Cluster all keys of one call are in one slot)
-- ARGV[1]     waiter timeout in milliseconds: each live waiter's deadline becomes now + timeout
-- ARGV[i+1]   waiter id queued at KEYS[i]
--
-- returns     array of integers, one per waiter: 1 still queued (deadline moved), 0 no longer queued
--             (served, evicted, or it left): nothing changed
--
-- Safe to run twice: setting a deadline again changes nothing but the deadline.
local nowMs = queue_now()
local deadline = nowMs + tonumber(ARGV[1])
local out = {}
for i, qt in ipairs(KEYS) do
  local id = ARGV[i + 1]
  -- pcall: a key of another type must not fail the heartbeat of the whole batch.
  local score = redis.pcall('ZSCORE', qt, id)
  if type(score) == 'string' and tonumber(score) > nowMs then
    redis.call('ZADD', qt, 'XX', deadline, id)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
