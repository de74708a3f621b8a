-- rw_acquire.lua: acquire or re-enter the read or write side of a ReadWriteLock. Format: rw_value.lua.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  owner id
-- ARGV[2]  lease in ms (0, for a re-entry: keep the hold's expiry, as a fixed lease does)
-- ARGV[3]  level id to add
-- ARGV[4]  mode: "f" one attempt, "w" a waiting attempt (which registers the owner as waiting, with
--          a ticket, when it fails), "r" re-entry of an owner that holds the side
-- ARGV[5]  side: "r" read, "x" write
-- ARGV[6]  waiter timeout in ms (how long a waiter's registration lasts without a heartbeat, and
--          for how long a hold given to the waiter is reserved for it: see rw_grant in rw_value.lua)
-- ARGV[7]  read side: the writer that vouches for the reader ("" none): the writer may also read
--          (and downgrade by releasing the write side) while it holds the lock
--
-- returns  {n, 0, ticket, 0}: n ≥ 1 the owner's levels on that side; -1 re-entry of an owner that no
--          longer holds it; ≤ -3 held by others: -3 - ms until the latest holder's lease ends, and
--          ticket the owner's place if the attempt registered it as waiting (0 otherwise): a release
--          that gives it the lock names that ticket (see rw_grant in rw_value.lua)
--
-- Who enters is decided by tickets (see rw_value.lua); a reader the writer vouches for enters at once.
-- Safe to run twice: a level id is added once, a repeat of a fresh acquisition by the same owner finds
-- its own hold and adds nothing more, and a repeated registration keeps its ticket. A copy that lands
-- after the owner's final release takes the side again for an owner that is gone, as for every kind
-- of lock: the client's repeated undos (see undoLater in lock.go) catch it if it lands within them,
-- and otherwise it holds the side until its lease ends.
local key = KEYS[1]
local owner, leaseMs, level, mode, side, waiterMs, vouch =
  ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7]
local now = rw_now()
if side == 'r' and mode ~= 'r' and vouch == '' then
  -- The common acquisition: a reader new to the lock (it neither holds nor waits). It enters while
  -- no writer holds the lock and none waits, else it waits; the counters tell without loading the
  -- hash. Left to rw_load: a hash without valid counters (not one of ours), and waiting writers that
  -- may all have lapsed (rw_load sweeps them).
  local v = redis.call('HMGET', key, 'w', 'nr', 'nww', 'wwd', 'seq', 'r:' .. owner, 'wr:' .. owner, 'ww:' .. owner)
  local wexp, nr, nww, wwd = rw_expiry(v[1]), tonumber(v[2]), tonumber(v[3]), tonumber(v[4])
  if not (v[1] or v[2] or v[3] or v[4] or v[5]) and redis.call('EXISTS', key) == 0 then
    nr, nww, wwd = 0, 0, 0
  end
  if nr and nww and wwd and (not v[5] or tonumber(v[5])) and not (v[6] or v[7] or v[8]) and
      (not v[1] or wexp) and (nww == 0 or wwd > now) then
    local ttl = redis.call('PTTL', key)
    if (wexp and wexp > now) or nww > 0 then
      if mode ~= 'w' then
        return {-3 - math.max(ttl, 0), 0, 0, 0}
      end
      local t = {seq = tonumber(v[5]) or 0, rwaiters = {}}
      rw_wait(key, t, t.rwaiters, 'wr:', owner, now, waiterMs)
      if ttl < waiterMs then
        redis.call('PEXPIRE', key, waiterMs)
      end
      return {-3 - math.max(ttl, 0), 0, t.rwaiters[owner].ticket, 0}
    end
    redis.call('HSET', key, 'r:' .. owner, level .. '|' .. (now + leaseMs), 'nr', nr + 1, 'nww', nww,
      'wwd', string.format('%d', wwd))
    if ttl < leaseMs then
      redis.call('PEXPIRE', key, leaseMs)
    end
    return {1, 0, 0, 0}
  end
end
local s, err = rw_load(key, now)
if not s then
  return err
end

if side == 'r' then
  local r = s.readers[owner]
  if not r then
    if mode == 'r' then
      return {-1, 0, 0, 0}
    end
    if rw_blocked(s, 'r', owner, vouch) then
      if mode == 'w' then
        rw_wait(key, s, s.rwaiters, 'wr:', owner, now, waiterMs)
        rw_store(key, now, s)
        return {rw_pttl(now, s), 0, s.rwaiters[owner].ticket, 0}
      end
      return {rw_pttl(now, s), 0, 0, 0}
    end
    r = {levels = '', expiry = now + leaseMs}
    s.readers[owner] = r
  end
  r.levels = rw_add(r.levels, level)
  if leaseMs > 0 then -- 0: a re-entry of a fixed lease keeps its expiry
    r.expiry = now + leaseMs
  end
  redis.call('HSET', key, 'r:' .. owner, r.levels .. '|' .. r.expiry)
  rw_unwait(key, s, owner)
  rw_store(key, now, s)
  return {rw_count(r.levels), 0, 0, 0}
end

local w = s.writer
if not (w and w.owner == owner) then
  if mode == 'r' then
    return {-1, 0, 0, 0}
  end
  if rw_blocked(s, 'x', owner, '') then
    if mode == 'w' then
      rw_wait(key, s, s.waiters, 'ww:', owner, now, waiterMs)
      rw_store(key, now, s)
      return {rw_pttl(now, s), 0, s.waiters[owner].ticket, 0}
    end
    return {rw_pttl(now, s), 0, 0, 0}
  end
  w = {owner = owner, levels = '', expiry = now + leaseMs}
  s.writer = w
end
w.levels = rw_add(w.levels, level)
if leaseMs > 0 then -- 0: a re-entry of a fixed lease keeps its expiry
  w.expiry = now + leaseMs
end
redis.call('HSET', key, 'w', w.owner .. '|' .. w.levels .. '|' .. w.expiry)
rw_unwait(key, s, owner)
rw_store(key, now, s)
return {rw_count(w.levels), 0, 0, 0}
