-- rw_release.lua: release one level, or the whole hold, of the read or write side of a
-- ReadWriteLock; also takes the owner out of the waiters (the undo of a wait). Format: rw_value.lua.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  owner id
-- ARGV[2]  level id
-- ARGV[3]  "1": final, release whatever levels are left; "0": the level only
-- ARGV[4]  side: "r" read, "x" write
-- ARGV[5]  publish command: PUBLISH or SPUBLISH
-- ARGV[6]  the lock's wake-up channel prefix: a release that frees the lock for waiters, or the undo
--          of a wait that may have stood in others' way, gives it to whoever is next and wakes them
--          on their clients' channels (see rw_grant)
-- ARGV[7]  the client's waiter timeout in ms: the owner's, when it rejoins (ARGV[8]); and how long a
--          hold given to a waiter whose registration does not name its own timeout (an older
--          format: see rw_value.lua) lasts until it confirms or renews it
-- ARGV[8]  optional, for the undo of a waiting owner that was given the side but whose answer came
--          too late for it to rely on (a give-back): "" none; else the owner's ticket ("0" if it
--          entered without waiting). If the owner holds the side, it is registered as waiting again
--          at its place (rw_rejoin in rw_value.lua) before the lock is given to whoever is next: so
--          it is given back to the owner, which keeps its turn. If the owner no longer holds the
--          side, it just stops waiting, as any undo.
--
-- returns  0 released (the owner no longer holds the side), 1 the level is gone and the owner still
--          holds the side (a partial release never frees it, even with no level left), -1 the owner
--          did not hold the side: lost, released by an earlier copy of this release, or an undone
--          acquisition never applied
--
-- Safe to run twice, and it keeps no record: a repeat finds the level gone and answers 1, or, for a
-- final release, finds the owner gone and answers -1, which the client, told that the reply answers
-- a re-send, reads as released unless the hold was known lost (see releaseFinal in hold.go). A repeat
-- of a give-back finds the owner holding the side it was given back, and gives it back again.
local key = KEYS[1]
local owner, level, final, side, publish, wakePrefix, reserveMs, rejoin =
  ARGV[1], ARGV[2], ARGV[3] == '1', ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8] or ''
local now = rw_now()
if final and side == 'r' and rejoin == '' then
  -- The common release: a reader's, while other reader fields remain (nr > 1). It frees nothing for
  -- anyone (no writer holds beside readers that are not its own), so the hash need not be loaded.
  -- Should every other reader have lapsed, the waiters' heartbeats find the way clear (rw_renew.lua).
  local v = redis.call('HMGET', key, 'r:' .. owner, 'wr:' .. owner, 'ww:' .. owner, 'nr')
  local exp, nr = rw_expiry(v[1]), tonumber(v[4])
  if exp and exp > now and not (v[2] or v[3]) and nr and nr > 1 then
    redis.call('HDEL', key, 'r:' .. owner)
    redis.call('HSET', key, 'nr', nr - 1)
    return 0
  end
end
local s, err = rw_load(key, now)
if not s then
  return err
end
local waited = s.waiters[owner] or s.rwaiters[owner]
rw_unwait(key, s, owner)

local held, field, value
if side == 'r' then
  held = s.readers[owner]
  field = 'r:' .. owner
else
  held = s.writer and s.writer.owner == owner and s.writer or nil
  field = 'w'
end
if not held then
  if waited then
    rw_grant(key, s, now, reserveMs, publish, wakePrefix) -- the wait that ended may have stood in others' way
  end
  rw_store(key, now, s)
  return -1
end
held.levels = rw_remove(held.levels, level)
if not final then
  -- The owner keeps the side, even with no level left, until its final release: a re-entry may be
  -- in flight for it (as lock_release.lua).
  if side == 'r' then
    value = held.levels .. '|' .. held.expiry
  else
    value = owner .. '|' .. held.levels .. '|' .. held.expiry
  end
  redis.call('HSET', key, field, value)
  rw_store(key, now, s)
  return 1
end
redis.call('HDEL', key, field)
if side == 'r' then
  s.readers[owner] = nil
  s.nreaders = s.nreaders - 1
else
  s.writer = nil
end
if rejoin ~= '' then
  rw_rejoin(key, s, side, owner, now, reserveMs, rejoin)
end
if side == 'x' or s.nreaders == 0 then
  rw_grant(key, s, now, reserveMs, publish, wakePrefix)
end
rw_store(key, now, s)
return 0
