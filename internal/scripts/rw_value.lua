-- rw_value.lua: the one Lua encoder and decoder of a ReadWriteLock's stored format. It is prepended to
-- every ReadWriteLock script (see scripts.go); the Go side reads it only through rw_state.lua.
--
-- The lock key, absent when free, is a HASH (so that every other kind of lock refuses it with
-- WRONGTYPE, and the ReadWriteLock scripts refuse a lock string the same way):
--   w            "<owner>|<levels>|<expiry>"  the writer, if any
--   r:<owner>    "<levels>|<expiry>"          one field per reader owner
--   ww:<owner>   "<ticket>|<timeout>|<deadline>"  a writer waiting
--   wr:<owner>   "<ticket>|<timeout>|<deadline>"  a reader waiting; timeout is the waiter's own waiter
--                timeout in ms, for which a hold given to it is reserved (rw_grant). A registration
--                written before the timeout was kept, "<ticket>|<deadline>", still decodes (timeout
--                0: unknown, the granting client's is used)
--   seq          the last ticket issued to a waiter; a new hash starts at its server time in µs
--                (ms × 1000), so tickets never repeat across lives of the hash (rw_wait)
--   nr, nww, wwd the number of r: and of ww: fields in the hash, lapsed ones included, and the
--                latest deadline of the ww: fields (0: none): present in every hash the scripts
--                leave, and exact after every script (rw_counts), so that the common acquisitions and
--                releases of readers need not load the hash (rw_acquire.lua, rw_release.lua)
-- Waiters are served in ticket order by phases: a reader may enter while no writer holds the lock and
-- no writer with an earlier ticket waits (so the readers waiting when a writer leaves all enter
-- together, before the next writer); a writer when nobody holds it and nobody with an earlier ticket
-- waits. A newcomer has no ticket: it enters only if nobody of the other side waits (and, for a
-- writer, no other writer waits).
-- owner ids and level ids are those of lock_value.lua (levels: comma-separated ids, so adding and
-- removing a level is idempotent). expiry and deadline are Redis server times in ms (TIME): each
-- reader's hold, the writer's and each waiting writer's registration lapse on their own. Fields
-- whose time has passed are deleted by the next script that loads the hash (rw_load), and the key's
-- TTL is kept at the latest time of all (rw_store), so a hash of dead holders vanishes on its own.

-- rw_now returns the server time in ms.
local function rw_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- rw_foreign is rw_load's answer for a hash that is not a ReadWriteLock's.
local function rw_foreign()
  return nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

-- rw_counts sets the counters nr, nww and wwd to what s holds (its readers, its waiting writers and
-- their latest deadline), if they differ from what the hash holds (s.nr, s.nww, s.wwd; nil: absent).
local function rw_counts(key, s)
  local nr, nww, wwd = 0, 0, 0
  for _ in pairs(s.readers) do
    nr = nr + 1
  end
  for _, w in pairs(s.waiters) do
    nww, wwd = nww + 1, math.max(wwd, w.deadline)
  end
  if nr ~= s.nr or nww ~= s.nww or wwd ~= s.wwd then
    s.nr, s.nww, s.wwd = nr, nww, wwd
    redis.call('HSET', key, 'nr', nr, 'nww', nww, 'wwd', string.format('%d', wwd))
  end
end

-- rw_load reads the hash at key, deletes the fields whose time has passed, and returns the state:
-- writer {owner, levels, expiry} or nil, readers[owner] = {levels, expiry}, nreaders, waiters
-- (writers) and rwaiters (readers) [owner] = {ticket, timeout, deadline}, seq. A hash field of another shape
-- is an error (WRONGTYPE): not ours.
local function rw_load(key, now)
  local flat = redis.call('HGETALL', key) -- WRONGTYPE on a string: a lock of another kind
  local readers, waiters, rwaiters = {}, {}, {}
  local s = {writer = nil, readers = readers, nreaders = 0, waiters = waiters, rwaiters = rwaiters, seq = 0}
  local dead = nil
  local byte, sub, match = string.byte, string.sub, string.match
  for i = 1, #flat, 2 do
    local f, v = flat[i], flat[i + 1]
    local c1, c2, c3 = byte(f, 1, 3)
    local exp
    if c1 == 114 and c2 == 58 then -- "r:<owner>"
      local levels
      levels, exp = match(v, '^([0-9a-z,]*)|(%d+)$')
      if not levels then
        return rw_foreign()
      end
      exp = tonumber(exp)
      if exp > now then
        readers[sub(f, 3)] = {levels = levels, expiry = exp}
        s.nreaders = s.nreaders + 1
      end
    elseif c1 == 119 and c3 == 58 and (c2 == 119 or c2 == 114) then -- "ww:<owner>", "wr:<owner>"
      local ticket, timeout
      ticket, timeout, exp = match(v, '^(%d+)|(%d+)|(%d+)$')
      if not ticket then
        ticket, exp = match(v, '^(%d+)|(%d+)$') -- the older format: the timeout is unknown
        timeout = 0
      end
      if not ticket then
        return rw_foreign()
      end
      exp = tonumber(exp)
      if exp > now then
        local tbl = waiters
        if c2 == 114 then
          tbl = rwaiters
        end
        tbl[sub(f, 4)] = {ticket = tonumber(ticket), timeout = tonumber(timeout), deadline = exp}
      end
    elseif f == 'w' then
      local owner, levels
      owner, levels, exp = match(v, '^([^|,@=;]+)|([0-9a-z,]*)|(%d+)$')
      if not owner then
        return rw_foreign()
      end
      exp = tonumber(exp)
      if exp > now then
        s.writer = {owner = owner, levels = levels, expiry = exp}
      end
    elseif f == 'seq' or f == 'nr' or f == 'nww' or f == 'wwd' then
      exp = tonumber(v)
      if not exp then
        return rw_foreign()
      end
      s[f] = exp
      exp = now + 1
    else
      return rw_foreign()
    end
    if exp <= now then
      dead = dead or {}
      dead[#dead + 1] = f
    end
  end
  if dead then
    redis.call('HDEL', key, unpack(dead))
  end
  if #flat > 0 and (not dead or redis.call('EXISTS', key) == 1) then
    rw_counts(key, s) -- never on a key that is gone: it would come back without a TTL
  end
  return s
end

-- rw_expiry returns the expiry (or deadline) of a field's value v, the number after its last "|",
-- or nil if v is false (an absent field, as HMGET gives it to Lua) or has no such number.
local function rw_expiry(v)
  if not v then
    return nil
  end
  return tonumber(string.match(v, '|(%d+)$'))
end

-- rw_store writes the state's fields back (the writer, the readers named in changed) and sets the
-- key's TTL to the latest time of all, or deletes the key when nothing is left.
local function rw_store(key, now, s)
  local latest = 0
  if s.writer then
    latest = math.max(latest, s.writer.expiry)
  end
  for _, r in pairs(s.readers) do
    latest = math.max(latest, r.expiry)
  end
  for _, w in pairs(s.waiters) do
    latest = math.max(latest, w.deadline)
  end
  for _, w in pairs(s.rwaiters) do
    latest = math.max(latest, w.deadline)
  end
  if latest <= now then
    redis.call('DEL', key)
  else
    rw_counts(key, s)
    redis.call('PEXPIRE', key, latest - now)
  end
end

-- rw_add returns levels with level added (once).
local function rw_add(levels, level)
  if string.find(',' .. levels .. ',', ',' .. level .. ',', 1, true) then
    return levels
  end
  if levels == '' then
    return level
  end
  return levels .. ',' .. level
end

-- rw_remove returns levels without level.
local function rw_remove(levels, level)
  local out = {}
  for id in string.gmatch(levels, '[^,]+') do
    if id ~= level then
      out[#out + 1] = id
    end
  end
  return table.concat(out, ',')
end

-- rw_count returns the number of level ids in levels.
local function rw_count(levels)
  local n = 0
  for _ in string.gmatch(levels, '[^,]+') do
    n = n + 1
  end
  return n
end

-- rw_pttl is the answer of an acquisition that found the lock held: -3 - ms until the latest holder's
-- time passes (so ≤ -3), as lock_acquire.lua answers.
local function rw_pttl(now, s)
  local latest = now
  if s.writer then
    latest = math.max(latest, s.writer.expiry)
  end
  for _, r in pairs(s.readers) do
    latest = math.max(latest, r.expiry)
  end
  return -3 - (latest - now)
end

-- rw_first returns the smallest ticket among the waiters of tbl other than owner, or nil.
local function rw_first(tbl, owner)
  local first = nil
  for o, w in pairs(tbl) do
    if o ~= owner and (first == nil or w.ticket < first) then
      first = w.ticket
    end
  end
  return first
end

-- rw_ahead reports whether a waiter with ticket first (nil: none) comes before the owner's ticket
-- mine (nil: a newcomer, behind everyone).
local function rw_ahead(first, mine)
  return first ~= nil and (mine == nil or first < mine)
end

-- rw_wait registers owner as waiting in tbl (field prefix pfx: "ww:" or "wr:") until now + ms, its
-- waiter timeout, keeping its ticket if it has one.
local function rw_wait(key, s, tbl, pfx, owner, now, ms)
  local w = tbl[owner]
  if not w then
    if s.seq == 0 then
      -- A new life of the hash: tickets go on from where no earlier life's can have reached, so
      -- that a waiter's (owner, ticket) names one registration only (see rw_grant's message).
      s.seq = now * 1000
      redis.call('HSET', key, 'seq', string.format('%d', s.seq))
    end
    s.seq = redis.call('HINCRBY', key, 'seq', 1)
    w = {ticket = s.seq}
    tbl[owner] = w
  end
  w.timeout, w.deadline = ms, now + ms
  redis.call('HSET', key, pfx .. owner, string.format('%d|%d|%d', w.ticket, ms, w.deadline))
end

-- rw_rejoin registers owner, which gives back the side ("r" or "x") it was given because the answer
-- came too late for it to rely on (see rw_release.lua), as waiting again at its place: with ticket,
-- its own, or, with ticket 0 (it entered without waiting), just ahead of every waiter; ms is its
-- waiter timeout. A registration of the owner with an earlier ticket is kept.
local function rw_rejoin(key, s, side, owner, now, ms, ticket)
  local tbl, pfx = s.waiters, 'ww:'
  if side == 'r' then
    tbl, pfx = s.rwaiters, 'wr:'
  end
  ticket = tonumber(ticket)
  if ticket <= 0 then
    local first = rw_first(s.waiters, owner)
    local rfirst = rw_first(s.rwaiters, owner)
    if rfirst and (not first or rfirst < first) then
      first = rfirst
    end
    ticket = first and first - 1
  end
  if ticket and not (tbl[owner] and tbl[owner].ticket <= ticket) then
    tbl[owner] = {ticket = ticket}
  end
  rw_wait(key, s, tbl, pfx, owner, now, ms) -- a new ticket if nobody waits
end

-- rw_unwait takes owner out of the waiters of both sides.
local function rw_unwait(key, s, owner)
  if s.waiters[owner] or s.rwaiters[owner] then
    s.waiters[owner], s.rwaiters[owner] = nil, nil
    redis.call('HDEL', key, 'ww:' .. owner, 'wr:' .. owner)
  end
end

-- rw_blocked reports whether owner must wait to enter side ("r" or "x"): the ticket rule above. A
-- reader that holds already, or that the writer vouches for, never waits; nor does the writer itself.
local function rw_blocked(s, side, owner, vouch)
  if side == 'r' then
    if s.readers[owner] or (s.writer and s.writer.owner == vouch) then
      return false
    end
    local mine = s.rwaiters[owner] and s.rwaiters[owner].ticket
    return s.writer ~= nil or rw_ahead(rw_first(s.waiters, owner), mine)
  end
  if s.writer and s.writer.owner == owner then
    return false
  end
  local mine = s.waiters[owner] and s.waiters[owner].ticket
  return s.writer ~= nil or s.nreaders > 0 or rw_ahead(rw_first(s.rwaiters, owner), mine)
    or rw_ahead(rw_first(s.waiters, owner), mine)
end

-- rw_grant gives the lock to whoever is next in ticket order and can enter now, as if each had
-- tried again: while no writer holds it, every waiting reader with a ticket before the first waiting
-- writer's; otherwise, if nobody holds it, that writer. Each is woken on its client's channel,
-- "<wakePrefix><client id>" (owner ids are "<client id>:<sequence>", as a Lock's), by
-- "<owner>|<ticket>|<reserve ms>", which tells it that it holds the lock (the message of
-- lock_hand_over in lock_value.lua). A granted hold has levels "1" (a waiter's first level id) and
-- is reserved for the waiter's own timeout (its registration's; reserveMs, the caller's, for a
-- registration that does not name it), by when a live waiter has renewed or confirmed it and a dead
-- one stalls nobody any longer; if nobody received the message (the client is subscribing, or
-- dead), no longer than the waiter's registration would have lasted. The caller stores the state.
local function rw_grant(key, s, now, reserveMs, publish, wakePrefix)
  if s.writer then
    return
  end
  local first = nil
  for o, w in pairs(s.waiters) do
    if first == nil or w.ticket < first.ticket then
      first = {owner = o, ticket = w.ticket, timeout = w.timeout, deadline = w.deadline}
    end
  end
  local granted = {}
  for o, w in pairs(s.rwaiters) do
    if first == nil or w.ticket < first.ticket then
      granted[#granted + 1] = {owner = o, ticket = w.ticket, timeout = w.timeout, deadline = w.deadline}
    end
  end
  if #granted == 0 then
    if not first or s.nreaders > 0 then
      return
    end
    granted[1] = first
  end
  local holds, waits = {}, {}
  for _, g in ipairs(granted) do
    local client = string.match(g.owner, '^(.+):[^:]*$') or g.owner
    local reserve = reserveMs
    if g.timeout and g.timeout > 0 then
      reserve = g.timeout
    end
    local expiry = now + reserve
    if redis.call(publish, wakePrefix .. client, string.format('%s|%d|%d', g.owner, g.ticket, reserve)) == 0 then
      expiry = math.min(expiry, g.deadline)
    end
    if g == first then
      s.writer = {owner = g.owner, levels = '1', expiry = expiry}
      s.waiters[g.owner] = nil
      holds[1], holds[2] = 'w', g.owner .. '|1|' .. expiry
      waits[1] = 'ww:' .. g.owner
    else
      s.readers[g.owner] = {levels = '1', expiry = expiry}
      s.nreaders = s.nreaders + 1
      s.rwaiters[g.owner] = nil
      holds[#holds + 1] = 'r:' .. g.owner
      holds[#holds + 1] = '1|' .. expiry
      waits[#waits + 1] = 'wr:' .. g.owner
    end
  end
  redis.call('HSET', key, unpack(holds))
  redis.call('HDEL', key, unpack(waits))
end
