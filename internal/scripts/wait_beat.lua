-- wait_beat.lua: keep many queued waiters alive in one call (the renewal scheduler's heartbeat).
-- Formats: wait_queue.lua, lock_value.lua.
--
-- KEYS[1..3n] for waiter i, KEYS[3i-2] its object key (its lock), KEYS[3i-1] the q key of its
--             queue, KEYS[3i] its qt key (on Cluster all keys of one call are in one slot)
-- ARGV[1]     waiter timeout in milliseconds, of the client whose waiters these are: the client's
--             deadline in each queue becomes now + timeout, and the queue's keys live at least one
--             and a half timeouts more
-- ARGV[i+1]   waiter i's id
--
-- returns     array of integers, one per waiter: 1 still queued, the object held (the client's
--             deadline moved; a lock held without the queue mark is marked, so that its release
--             hands it over); 0 the waiter should try again: no longer queued (served, evicted, or
--             it left), or the object is free (it ended without a release that would have handed it
--             over: a lease that ran out, a holder that died, a newcomer's release that did not look
--             at the queue)
--
-- Safe to run twice: setting a deadline again changes nothing but the deadline.
local nowMs = queue_now()
local timeoutMs = tonumber(ARGV[1])
local out, done = {}, {}
for i = 1, #ARGV - 1 do
  local key, q, qt, id = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i], ARGV[i + 1]
  -- pcall: a key of another type must not fail the heartbeat of the whole batch.
  local score = redis.pcall('ZSCORE', q, queue_member(id, timeoutMs))
  local cur = type(score) == 'string' and redis.pcall('GET', key)
  if cur then
    -- A lock held without the mark (a newcomer took it free with SET NX, and transfers it to its
    -- own goroutines) is never handed over through the queue: mark it, under a new epoch, so that
    -- its next final release hands it to the head of the queue.
    local holder, levels, mark, kind, token = lock_decode(type(cur) == 'string' and cur or '')
    if holder and mark == '' then
      local _, nowUs = queue_now()
      redis.call('SET', key, lock_encode(holder, levels, string.format('w%d', nowUs), kind, token), 'KEEPTTL')
    end
    local client = client_of(id)
    if not done[qt .. '\0' .. client] then
      done[qt .. '\0' .. client] = true
      redis.call('ZADD', qt, nowMs + timeoutMs, client)
      queue_keep(q, qt, timeoutMs)
    end
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
