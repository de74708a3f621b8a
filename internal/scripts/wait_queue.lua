-- wait_queue.lua: the one Lua implementation of an object's wait queue, prepended to every script
-- that touches it (see scripts.go). The queue is two sorted sets under the object's hash tag:
--   q   "<waiter id>/<waiter timeout ms>" -> arrival (server time, µs): the order in which waiters
--       are served; the arrival is also the waiter's ticket, telling its queued places apart (a
--       waiter served, then queued again, has a new one; one that gives back what it was served
--       because the answer came too late rejoins with its old one: see queue_rejoin). It also holds
--       the end marker, "~end" scored +inf (served last, so popping it means nobody is left),
--       from the refresh that creates it: q is emptied only by a serve that finds nobody left, or
--       a free lock's taker that finds nobody left, and both end the epoch (see Epochs); absent
--       then.
--   qt  client id -> liveness deadline (server time, ms): the waiters of a client are alive while its
--       deadline is in the future. A client moves it with its heartbeats (wait_beat.lua) and with a
--       join when its last refresh may be getting old (see queue_join); a client whose process died
--       stops, and its waiters are evicted when they reach the head.
-- A waiter id is an owner id, "<client id>:<sequence>"; a waiter is woken on its client's channel,
-- "<channel prefix><client id>", by a message that starts with its id. Every time comes from TIME,
-- so clients' clocks do not matter. Both keys live at least one and a half waiter timeouts (of the
-- longest timeout among the waiters kept alive since) after the last refresh of a deadline (a
-- heartbeat, or a join when its client's last refresh may be getting old), and at most two, so the
-- queue of processes that all died leaves nothing behind.
--
-- Epochs. A client skips refreshing its deadline on a join while its last refresh is recent, which
-- is only safe while that refresh is still in qt. qt is deleted when the queue empties (so nothing is
-- left when nobody waits), and a lock that may have waiters carries the queue's epoch in its mark
-- (lock_value.lua): a server time (µs) taken after qt was last deleted. A join names the epoch of the
-- client's recent refresh; if the lock carries another, the client refreshes. So: whoever deletes qt
-- ends the epoch (the lock is freed, or left with no mark), and a new epoch is always a new TIME.
--
-- The same recent refresh lets a join that skips it skip keeping q's TTL too: that refresh kept q
-- for one and a half timeouts (PTTL/PEXPIRE), and q has not been deleted since, because only what
-- ends the epoch empties it (the end marker), so the join's ZADD does not create q. A q that a
-- refresh finds without a TTL (just created) gets the end marker with its TTL; so a join costs its
-- ZADD and the TIME of its ticket, nothing to keep the queue. During a rolling upgrade from a
-- version without the marker, an older client may evict it (it takes it for a dead waiter); the
-- queue may then empty within an epoch, and a join that skips its refresh re-creates it without a
-- TTL, until the next heartbeat or refresh of a waiting client (a third of its waiter timeout)
-- restores both: a queue is left behind for good only if every process of the lock dies in that
-- window.

-- client_of is the client id part of an owner or request id ("<client id>:<sequence>").
local function client_of(id)
  return string.match(id, '^(.+):[^:]*$') or id
end

-- queue_end is q's end marker, scored +inf (see above): never a waiter, never evicted.
local queue_end = '~end'

-- queue_member is waiter id's member of q; queue_split decodes one (timeout 0: not a waiter's).
local function queue_member(id, timeoutMs)
  return id .. '/' .. timeoutMs
end

local function queue_split(member)
  local id, timeoutMs = string.match(member, '^(.+)/(%d+)$')
  if not id then
    return member, 0
  end
  return id, tonumber(timeoutMs)
end

-- queue_now returns the server time in ms and in µs.
local function queue_now()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end

-- queue_keep makes q and qt outlive a waiter of timeoutMs, checking cheaply: a key is extended
-- to twice that only when it has less than one and a half left (a new key has no TTL; a live
-- waiter's client refreshes within a third of its timeout, so keys kept for one and a half of its
-- timeouts outlive its deadline). A TTL is only ever lengthened: a client with a shorter timeout must
-- not cut the life of another's deadline, which that client may rely on for a while without
-- refreshing it (see Epochs). Each key is checked on its own: q and qt are created and emptied at
-- different times, so their TTLs differ; a key that does not exist is left so. A q found without a
-- TTL was just created (or predates the end marker): it gets the marker.
local function queue_keep(q, qt, timeoutMs)
  for _, k in ipairs({ q, qt }) do
    local ttl = redis.call('PTTL', k)
    if ttl < 3 * timeoutMs / 2 then
      if ttl == -1 and k == q then
        redis.call('ZADD', q, 'NX', '+inf', queue_end)
      end
      if ttl ~= -2 then
        redis.call('PEXPIRE', k, 2 * timeoutMs)
      end
    end
  end
end

-- queue_refresh moves client's deadline to nowMs + timeoutMs and, when the client is new in qt,
-- drops the clients whose deadline passed (a passed deadline reads as dead all the same; dropping
-- them only bounds qt, which grows only by new clients) and makes sure q has its end marker: a
-- queue made by a client of a version without markers has a TTL and none, and a client's first
-- refresh in an epoch finds it new in qt (qt is deleted when an epoch ends), so its later joins,
-- which may skip refreshing, never meet a q that has no marker.
local function queue_refresh(q, qt, client, nowMs, timeoutMs)
  if redis.call('ZADD', qt, nowMs + timeoutMs, client) == 1 then
    redis.call('ZREMRANGEBYSCORE', qt, '-inf', nowMs)
    if redis.call('EXISTS', q) == 1 then
      redis.call('ZADD', q, 'NX', '+inf', queue_end)
    end
  end
  queue_keep(q, qt, timeoutMs)
end

-- queue_join queues id (keeping its place if it is queued already) and returns its ticket, the epoch
-- (the lock's, epoch, or a new one if that is ""), and whether its client's deadline was refreshed:
-- it is unless known, the epoch of the client's recent refresh, is the epoch: then q exists and
-- outlives the waiter's first heartbeat (see Epochs), and nothing keeps it.
local function queue_join(q, qt, id, timeoutMs, epoch, known)
  local nowMs, nowUs = queue_now()
  timeoutMs = tonumber(timeoutMs)
  if epoch == '' then
    epoch = string.format('%d', nowUs)
  end
  local member = queue_member(id, timeoutMs)
  local ticket = nowUs
  if redis.call('ZADD', q, 'NX', nowUs, member) == 0 then
    ticket = tonumber(redis.call('ZSCORE', q, member))
  end
  if known == epoch then
    return ticket, epoch, false
  end
  queue_refresh(q, qt, client_of(id), nowMs, timeoutMs)
  return ticket, epoch, true
end

-- queue_rejoin puts id back in the queue at its place, for a waiter that gives back what it was
-- given because the answer came too late for it to rely on (see lock_release.lua): with its ticket
-- (its arrival: it keeps its place), or, with ticket 0 (it took the lock without queueing), just
-- ahead of the first waiter. A copy of the waiter already in the queue (a queueing attempt re-sent
-- after it was served) moves to the earlier place. Its client's deadline is refreshed, so that the
-- hand-over that follows counts it alive.
local function queue_rejoin(q, qt, id, timeoutMs, ticket)
  local nowMs, nowUs = queue_now()
  timeoutMs = tonumber(timeoutMs)
  ticket = tonumber(ticket)
  if ticket <= 0 then
    local head = redis.call('ZRANGE', q, 0, 0, 'WITHSCORES')
    ticket = nowUs
    if head[2] and head[1] ~= queue_end then
      ticket = math.min(tonumber(head[2]) - 1, nowUs)
    end
  end
  redis.call('ZADD', q, 'LT', string.format('%d', ticket), queue_member(id, timeoutMs))
  queue_refresh(q, qt, client_of(id), nowMs, timeoutMs)
end

-- queue_leave takes id out of the queue, if it is there.
local function queue_leave(q, id, timeoutMs)
  redis.call('ZREM', q, queue_member(id, timeoutMs))
end

-- queue_deadline returns client's liveness deadline (0 if none), asking Redis once per script run.
local function queue_deadline(qt, client, seen)
  local d = seen[client]
  if d == nil then
    d = tonumber(redis.call('ZSCORE', qt, client) or '0')
    seen[client] = d
  end
  return d
end

-- queue_purge evicts, from the first 1024 waiters of the queue, those whose client's deadline passed
-- (or is gone). It runs where a lock is found free while waiters queue, which is where a lock handed
-- to a waiter that could not take it ends (its process stopped or cut off while still subscribed, so
-- a release took it to be alive; see queue_serve): that process stalls the lock once, not once per
-- waiter it has queued.
local function queue_purge(q, qt)
  local nowMs, seen, gone = queue_now(), {}, {}
  for _, m in ipairs(redis.call('ZRANGE', q, 0, 1023)) do
    local id, timeoutMs = queue_split(m)
    if m ~= queue_end and (timeoutMs == 0 or queue_deadline(qt, client_of(id), seen) <= nowMs) then
      gone[#gone + 1] = m
    end
  end
  if #gone > 0 then
    redis.call('ZREM', q, unpack(gone))
  end
end

-- queue_head returns the first live waiter's id without taking it out, evicting the dead waiters
-- ahead of it. It is nil if nobody is left; if more than 1024 dead waiters were ahead, it is nil and
-- the second result, exhausted, is true: live waiters may remain, and the next call evicts more.
local function queue_head(q, qt)
  local nowMs, seen = queue_now(), {}
  for _ = 1, 8 do
    local heads = redis.call('ZRANGE', q, 0, 127)
    if #heads == 0 then
      return nil, false
    end
    local dead = {}
    for _, m in ipairs(heads) do
      local id, timeoutMs = queue_split(m)
      local live = timeoutMs > 0 and queue_deadline(qt, client_of(id), seen) > nowMs
      if live or m == queue_end then
        if #dead > 0 then
          redis.call('ZREM', q, unpack(dead))
        end
        if live then
          return id, false
        end
        return nil, false
      end
      dead[#dead + 1] = m
    end
    redis.call('ZREM', q, unpack(dead))
  end
  return nil, true
end

-- queue_serve takes the first live waiter out of the queue and wakes it with the message
-- "<id>|<ticket>|<reserve ms>[|<extra()>]" on its client's channel (extra, if given, is called once
-- per waiter woken). It returns the waiter's id and reserve: the time the caller keeps what it gives
-- the waiter for it, at most its waiter timeout, so a waiter that died stalls nobody longer. It
-- returns nil if nobody live is left, and then true if more than 1024 dead waiters were ahead
-- (exhausted: see queue_head).
--
-- Liveness, cheaply: a waiter whose client receives the message is taken to be alive (a client
-- subscribes to its channel while it has waiters). Only when nobody receives it (the process died,
-- or it is subscribing or resubscribing) is its deadline read: a live waiter keeps what it is given,
-- for no longer than its deadline, and finds it its own when it tries again once subscribed. A
-- process stopped or cut off while its connection stays open, or a pattern subscription matching the
-- channel, makes a waiter that cannot take what it is given look alive: it stalls the lock for its
-- waiter timeout, after which the lock is found free and queue_purge evicts its client's waiters.
local function queue_serve(q, qt, publish, wakePrefix, extra)
  local nowMs, seen = nil, {}
  for _ = 1, 1024 do
    local popped = redis.call('ZPOPMIN', q)
    if not popped[1] or popped[1] == queue_end then
      return nil, false -- nobody left: q is gone
    end
    local id, timeoutMs = queue_split(popped[1])
    local client = client_of(id)
    if timeoutMs > 0 and not (nowMs and queue_deadline(qt, client, seen) <= nowMs) then
      local msg = string.format('%s|%d|%d', id, tonumber(popped[2]), timeoutMs)
      if extra then
        msg = msg .. '|' .. extra()
      end
      if redis.call(publish, wakePrefix .. client, msg) > 0 then
        return id, timeoutMs
      end
      nowMs = nowMs or queue_now()
      local left = queue_deadline(qt, client, seen) - nowMs
      if left > 0 then
        return id, math.min(left, timeoutMs)
      end
    end
  end
  return nil, true
end
