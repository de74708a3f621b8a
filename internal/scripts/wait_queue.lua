-- wait_queue.lua: the one Lua implementation of an object's wait queue, prepended to every script
-- that touches it (see scripts.go). The queue is two sorted sets under the object's hash tag, both
-- absent when nobody waits:
--   q   waiter id -> arrival (server time, µs): the order in which waiters are served
--   qt  waiter id -> liveness deadline (server time, ms): a waiter whose deadline passed is dead
--       (its process stopped renewing it: see wait_beat.lua) and is evicted
-- A waiter id is an owner id, "<client id>:<sequence>"; the head waiter is woken on its client's
-- channel, "<channel prefix><client id>", with its id as the message. Every time comes from TIME, so
-- clients' clocks do not matter. Both keys expire two waiter timeouts after the last waiter joined
-- alone or was kept alive, so the waiters of processes that all died leave nothing behind; dead
-- waiters ahead of live ones are evicted when they reach the head.

-- client_of is the client id part of an owner or request id ("<client id>:<sequence>").
local function client_of(id)
  return string.match(id, '^(.+):[^:]*$') or id
end

-- queue_now returns the server time in ms and in µs.
local function queue_now()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end

-- queue_join queues id (keeping its place if it is queued already) and sets its deadline.
local function queue_join(q, qt, id, timeoutMs)
  local nowMs, nowUs = queue_now()
  redis.call('ZADD', q, 'NX', nowUs, id)
  redis.call('ZADD', qt, nowMs + tonumber(timeoutMs), id)
  if redis.call('ZCARD', q) == 1 then
    redis.call('PEXPIRE', q, 2 * tonumber(timeoutMs))
    redis.call('PEXPIRE', qt, 2 * tonumber(timeoutMs))
  end
end

-- queue_leave takes id out of the queue, if it is there.
local function queue_leave(q, qt, id)
  redis.call('ZREM', q, id)
  redis.call('ZREM', qt, id)
end

-- queue_head evicts dead waiters from the head (up to 16) and returns the first live one (nil if
-- none), the ms it has left before its deadline, and whether another waiter follows it.
local function queue_head(q, qt)
  local nowMs = queue_now()
  for _ = 1, 16 do
    local ids = redis.call('ZRANGE', q, 0, 1)
    local head = ids[1]
    if not head then
      return nil, 0, false
    end
    local deadline = tonumber(redis.call('ZSCORE', qt, head) or '0')
    if deadline > nowMs then
      return head, deadline - nowMs, ids[2] ~= nil
    end
    queue_leave(q, qt, head)
  end
  return nil, 0, false
end

-- queue_wake wakes waiter id: a message naming it on its client's channel, followed by "|" and data
-- if data is given.
local function queue_wake(publish, channelPrefix, id, data)
  local message = id
  if data then
    message = id .. '|' .. data
  end
  redis.call(publish, channelPrefix .. client_of(id), message)
end

