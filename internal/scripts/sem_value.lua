-- sem_value.lua: the one Lua encoder and decoder of a Semaphore's stored format. It is prepended to
-- every Semaphore script (see scripts.go).
--
-- The object key holds the available permits as a STRING integer (absent: none set yet, 0; it may
-- go below 0 only through a negative AddPermits). Beside it, in the same slot:
--   <key>:~sw         HASH of the waiters: field <waiter id> = "<ticket>|<n>|<deadline>", and "seq",
--                     the last ticket issued (a new hash starts at its server time in µs, so tickets
--                     never repeat). A waiter wants n permits; deadline (server ms) is moved by its
--                     client's heartbeats, and a waiter whose deadline passed is dropped by the next
--                     script that loads the hash.
--   <key>:~sl         ZSET of leased permits (PermitExpirableSemaphore): member "<acquisition id>#<i>",
--                     score its expiry (server ms). In the Redisson-compatible layout
--                     (WithRedissonCompat) it is Redisson's "{key}:timeout", member the raw 16-byte
--                     permit id, and a Java permit taken without a lease has score sem_never. A permit whose expiry passed is back in the pool:
--                     the next script that looks (sem_reclaim) removes it and adds it to the permits.
--   <key>:~sr:<id>    the outcome of request id where the state cannot tell it (an acquisition,
--                     of plain or leased permits, a single attempt that failed, an undo, a release, AddPermits,
--                     DrainPermits, TrySetPermits, a release of leased permits), kept for the waiter
--                     timeout (an "a" of plain permits at least as long as its acquisition asks,
--                     for its undo: see sem_acquire.lua): "a" an acquisition took its permits,
--                     "u" it was undone or failed (a copy landing later takes nothing), "c" a waiting attempt of the
--                     Redisson-compatible mode took nothing (the wait goes on), "r" a re-sent copy
--                     of a waiting attempt took nothing (the wait goes on), or the answer of a
--                     release-like request, so that a re-sent request is answered, not applied,
--                     again; a re-sent copy that finds no record applies nothing (see
--                     sem_release.lua). An acquisition's record is kept for the late-copy bound
--                     instead once a copy of one of its requests may still be travelling (a re-sent
--                     copy, or an undo after an unknown outcome: see sem_kept).
-- Waiters are served first come, first served, with reservations: an acquisition of n permits
-- succeeds when the permits left after those that every waiter ahead of it wants are at least n (a
-- newcomer is behind every waiter). So a large request is never passed by smaller ones, and waiters
-- woken together do not block each other. A release wakes, in ticket order, the waiters whose
-- wants fit in the permits then available, and stops at the first that does not.

-- sem_now returns the server time in ms.
local function sem_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- sem_permits returns the permits available at key (0 when unset), or nil and a WRONGTYPE error if
-- the key holds something else.
local function sem_permits(key)
  local v = redis.call('GET', key) -- WRONGTYPE on a hash, list, ...: not a semaphore
  if not v then
    return 0
  end
  -- Decimal digits only, and within what a Lua number holds exactly (the Go side keeps every count
  -- within ±(2^53 - 1): see sem_bound).
  if not string.match(v, '^-?%d+$') or #v > 16 or math.abs(tonumber(v)) > 9007199254740991 then
    return nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
  return tonumber(v)
end

-- sem_bound is the error of a change that would take the permits beyond ±(2^53 - 1).
local function sem_bound(permits)
  if math.abs(permits) > 9007199254740991 then
    return redis.error_reply('ERR semaphore permits out of range')
  end
end

-- sem_give adds n ≥ 0 permits that come back by themselves (a lease that passed, a leased permit
-- released by its id, an undo) to the permits at key, permits now, and returns the permits then
-- available. They cannot be refused as a Release past the bound is (sem_bound): those that would take
-- the count past 2^53 - 1 (AddPermits may have brought the available ones up to it while they were
-- out) are dropped, so that the count stays one that sem_permits reads.
local function sem_give(key, permits, n)
  n = math.min(n, 9007199254740991 - permits)
  if n <= 0 then
    return permits
  end
  return redis.call('INCRBY', key, n)
end

-- sem_reclaim returns to the permits at key the leased permits whose expiry passed (sem_give), and
-- returns the permits then available and how many came back.
local function sem_reclaim(key, leases, permits, now)
  local back = redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  if back > 0 then
    permits = sem_give(key, permits, back)
  end
  return permits, back
end

-- sem_never is the score of a permit whose lease never ends: Java Redisson's permits taken without
-- a lease (this package's permits always have one).
local sem_never = 922337203685477

-- sem_next returns ms until the earliest leased permit's expiry, or -1 if none will expire.
local function sem_next(leases, now)
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  if not first[2] or tonumber(first[2]) >= sem_never then
    return -1
  end
  return math.max(tonumber(first[2]) - now, 1)
end

-- sem_nudge wakes every waiter of list, one message per client ("*": all its waiters on that
-- channel), so that each tries again and learns when the earliest lease now ends: called when a
-- lease was made that ends before any other did.
local function sem_nudge(list, publish, wakePrefix)
  local seen = {}
  for _, w in ipairs(list) do
    local client = string.match(w.id, '^(.+):[^:]*$') or w.id
    if not seen[client] then
      seen[client] = true
      redis.call(publish, wakePrefix .. client, '*')
    end
  end
end

-- sem_first returns the earliest lease expiry (server ms), or nil if nothing is leased.
local function sem_first(leases)
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  return first[2] and tonumber(first[2])
end

-- sem_load reads the waiters hash, deletes the waiters whose deadline passed, and returns them
-- sorted by ticket ({id, ticket, n, deadline}), a map id -> waiter, and seq; or nil and a WRONGTYPE
-- error if a field has another shape.
local function sem_load(waiters, now)
  local flat = redis.call('HGETALL', waiters)
  local list, byID, seq, dead = {}, {}, 0, nil
  for i = 1, #flat, 2 do
    local f, v = flat[i], flat[i + 1]
    if f == 'seq' then
      seq = tonumber(v)
      if not seq then
        return nil, nil, nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
      end
    else
      local ticket, n, d = string.match(v, '^(%d+)|(%d+)|(%d+)$')
      if not ticket then
        return nil, nil, nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
      end
      if tonumber(d) <= now then
        dead = dead or {}
        dead[#dead + 1] = f
      else
        local w = {id = f, ticket = tonumber(ticket), n = tonumber(n), deadline = tonumber(d)}
        list[#list + 1] = w
        byID[f] = w
      end
    end
  end
  if dead then
    redis.call('HDEL', waiters, unpack(dead))
  end
  table.sort(list, function(a, b) return a.ticket < b.ticket end)
  return list, byID, seq
end

-- sem_ahead returns the permits wanted by the waiters of list before ticket (nil: a newcomer, behind
-- all of them).
local function sem_ahead(list, ticket)
  local sum = 0
  for _, w in ipairs(list) do
    if ticket and w.ticket >= ticket then
      break
    end
    sum = sum + w.n
  end
  return sum
end

-- sem_keep sets the waiters hash's TTL to its latest deadline, or deletes it when nobody waits.
local function sem_keep(waiters, list, now)
  local latest = 0
  for _, w in ipairs(list) do
    latest = math.max(latest, w.deadline)
  end
  if latest <= now then
    redis.call('DEL', waiters)
  else
    redis.call('PEXPIRE', waiters, latest - now)
  end
end

-- sem_wake wakes, in ticket order, the waiters of list whose wants fit in permits, each on its
-- client's channel "<wakePrefix><client id>" (ids are "<client id>:<sequence>") by a message naming
-- it; it stops at the first that does not fit.
local function sem_wake(list, permits, publish, wakePrefix)
  for _, w in ipairs(list) do
    if w.n > permits then
      return
    end
    permits = permits - w.n
    redis.call(publish, wakePrefix .. (string.match(w.id, '^(.+):[^:]*$') or w.id), w.id)
  end
end

-- sem_announce publishes the permits now available on Java Redisson's channel of the semaphore
-- (WithRedissonCompat; "" otherwise: nothing), as a Java client's release does: its waiters, and
-- this package's in that mode, wake and try again.
local function sem_announce(publish, channel, permits)
  if channel ~= '' and permits > 0 then
    redis.call(publish, channel, string.format('%d', permits))
  end
end

-- sem_kept returns how long a record written now at key record must last: ms, or what the record
-- there has left if that is longer (a record made to outlive the late copies of an acquisition, see
-- sem_acquire.lua, keeps doing so whatever the acquisition writes next).
local function sem_kept(record, ms)
  return math.max(ms, redis.call('PTTL', record))
end

-- sem_remove takes waiter id out of list and the hash, if it is there.
local function sem_remove(waiters, list, byID, id)
  if byID[id] then
    redis.call('HDEL', waiters, id)
    byID[id] = nil
    for i, w in ipairs(list) do
      if w.id == id then
        table.remove(list, i)
        break
      end
    end
  end
end

-- sem_open loads what every change starts from: it returns the server time, a state {permits (with
-- expired leases counted back), back (how many came back), list, byID, seq} (see sem_load), or nil and
-- a WRONGTYPE error if a key is not a semaphore's.
local function sem_open(key, waiters, leases)
  local now = sem_now()
  local permits, err = sem_permits(key)
  if not permits then
    return now, nil, err
  end
  local list, byID, seq, lerr = sem_load(waiters, now)
  if not list then
    return now, nil, lerr
  end
  local back
  permits, back = sem_reclaim(key, leases, permits, now)
  return now, {permits = permits, back = back, list = list, byID = byID, seq = seq}
end
