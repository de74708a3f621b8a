-- wait_queue.lua: the one Lua implementation of an object's wait queue, prepended to every script
-- that touches it (see scripts.go). The queue is two sorted sets under the object's hash tag, both
-- absent when nobody waits:
--   q   waiter id -> arrival (server time, µs): the order in which waiters are served
--   qt  waiter id -> liveness deadline (server time, ms): a waiter whose deadline passed is dead
--       (its process stopped renewing it: see wait_beat.lua) and is evicted
-- A waiter id is an owner id, "<client id>:<sequence>"; the head waiter is woken on its client's
-- channel, "<channel prefix><client id>", with its id as the message. Every time comes from TIME, so
-- clients' clocks do not matter.

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

-- queue_purge evicts up to 16 waiters whose deadline passed.
local function queue_purge(q, qt, nowMs)
  local dead = redis.call('ZRANGEBYSCORE', qt, '-inf', nowMs, 'LIMIT', 0, 16)
  for _, id in ipairs(dead) do
    redis.call('ZREM', q, id)
    redis.call('ZREM', qt, id)
  end
end

-- queue_join queues id (keeping its place if it is queued already) and sets its deadline.
local function queue_join(q, qt, id, timeoutMs)
  local nowMs, nowUs = queue_now()
  redis.call('ZADD', q, 'NX', nowUs, id)
  redis.call('ZADD', qt, nowMs + tonumber(timeoutMs), id)
end

-- queue_leave takes id out of the queue, if it is there.
local function queue_leave(q, qt, id)
  redis.call('ZREM', q, id)
  redis.call('ZREM', qt, id)
end

-- queue_head evicts dead waiters and returns the first live one (nil if none), with the ms it has
-- left before its deadline.
local function queue_head(q, qt)
  local nowMs = queue_now()
  queue_purge(q, qt, nowMs)
  local head = redis.call('ZRANGE', q, 0, 0)[1]
  if not head then
    return nil, 0
  end
  return head, math.max(tonumber(redis.call('ZSCORE', qt, head)) - nowMs, 1)
end

-- queue_wake wakes waiter id: a message naming it on its client's channel.
local function queue_wake(publish, channelPrefix, id)
  redis.call(publish, channelPrefix .. client_of(id), id)
end

