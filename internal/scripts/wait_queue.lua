-- wait_queue.lua: the one Lua implementation of an object's wait queue, prepended to every script
-- that touches it (see scripts.go). The queue is two sorted sets under the object's hash tag, both
-- absent when nobody waits:
--   q   waiter id -> arrival (server time, µs): the order in which waiters are served; the arrival
--       is also the waiter's ticket, telling its queued places apart (a waiter served, then queued
--       again, has a new one)
--   qt  waiter id -> liveness deadline (server time, ms): a waiter whose deadline passed is dead
--       (its process stopped renewing it: see wait_beat.lua) and is evicted
-- A waiter id is an owner id, "<client id>:<sequence>"; a waiter is woken on its client's channel,
-- "<channel prefix><client id>", by a message that starts with its id. Every time comes from TIME,
-- so clients' clocks do not matter. Both keys live at least two waiter timeouts (of the longest
-- timeout among the waiters that joined or were kept alive since) after the last join or heartbeat,
-- so the waiters of processes that all died leave nothing behind; dead waiters are evicted when a
-- script looks for the head.

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

-- queue_keep makes both keys outlive a waiter of timeoutMs, checking cheaply: they are extended to twice
-- that only when they have less than one and a half left (a live waiter renews within a third of its
-- timeout, so keys kept for one and a half of its timeouts outlive its deadline).
local function queue_keep(q, qt, timeoutMs)
  if redis.call('PTTL', q) < 3 * timeoutMs / 2 then
    redis.call('PEXPIRE', q, 2 * timeoutMs)
    redis.call('PEXPIRE', qt, 2 * timeoutMs)
  end
end

-- queue_join queues id (keeping its place if it is queued already), sets its deadline, and returns
-- its ticket.
local function queue_join(q, qt, id, timeoutMs)
  local nowMs, nowUs = queue_now()
  timeoutMs = tonumber(timeoutMs)
  local ticket = nowUs
  if redis.call('ZADD', q, 'NX', nowUs, id) == 0 then
    ticket = tonumber(redis.call('ZSCORE', q, id))
  end
  redis.call('ZADD', qt, nowMs + timeoutMs, id)
  queue_keep(q, qt, timeoutMs)
  return ticket
end

-- queue_leave takes id out of the queue, if it is there.
local function queue_leave(q, qt, id)
  redis.call('ZREM', q, id)
  redis.call('ZREM', qt, id)
end

-- queue_evict takes up to 128 dead waiters (anywhere in the queue) out, and reports whether more
-- may be left.
local function queue_evict(q, qt, nowMs)
  local dead = redis.call('ZRANGEBYSCORE', qt, '-inf', nowMs, 'LIMIT', 0, 128)
  if #dead == 0 then
    return false
  end
  redis.call('ZREM', q, unpack(dead))
  redis.call('ZREM', qt, unpack(dead))
  return #dead == 128
end

-- queue_head returns the first live waiter without taking it out, evicting dead waiters first if the
-- head is one. The head is nil if nobody is left; if more than 1024 dead waiters were still to evict,
-- it is nil and the second result, exhausted, is true: live waiters may remain, and the next call
-- evicts more.
local function queue_head(q, qt)
  local nowMs
  for _ = 1, 9 do
    local head = redis.call('ZRANGE', q, 0, 0)[1]
    if not head then
      return nil, false
    end
    nowMs = nowMs or queue_now()
    if tonumber(redis.call('ZSCORE', qt, head) or '0') > nowMs then
      return head, false
    end
    if not queue_evict(q, qt, nowMs) then
      queue_leave(q, qt, head) -- no deadline at all: a stray entry
    end
  end
  return nil, true
end

-- queue_pop takes the first live waiter out of the queue and returns it, its ticket and the ms it
-- has left before its deadline, evicting the dead waiters ahead of it (nil if none is left, or if
-- more than 1024 dead waiters were still to evict: see queue_head).
local function queue_pop(q, qt)
  local nowMs
  for _ = 1, 9 do
    local popped = redis.call('ZPOPMIN', q)
    local head = popped[1]
    if not head then
      return nil
    end
    nowMs = nowMs or queue_now()
    local deadline = tonumber(redis.call('ZSCORE', qt, head) or '0')
    redis.call('ZREM', qt, head)
    if deadline > nowMs then
      return head, tonumber(popped[2]), deadline - nowMs
    end
    queue_evict(q, qt, nowMs) -- the head was dead: others may be too
  end
  return nil
end

-- queue_wake wakes waiter id: a message "<id>|<data>" on its client's channel.
local function queue_wake(publish, channelPrefix, id, data)
  redis.call(publish, channelPrefix .. client_of(id), id .. '|' .. data)
end
