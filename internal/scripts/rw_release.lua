-- rw_release.lua: release one level, or the whole hold, of the read or write side of a
-- ReadWriteLock; also takes the owner out of the waiters (the undo of a wait). Format: rw_value.lua.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  owner id
-- ARGV[2]  level id
-- ARGV[3]  "1": final, release whatever levels are left; "0": the level only
-- ARGV[4]  side: "r" read, "x" write
-- ARGV[5]  publish command: PUBLISH or SPUBLISH
-- ARGV[6]  the lock's wake-up channel: a release that frees the lock for waiters wakes whoever is
--          next in ticket order: a writer by its owner id, readers with "*" (every waiter tries
--          again; the readers ahead of the next writer enter)
--
-- returns  0 released (the owner no longer holds the side), 1 the level is gone and the owner
--          still holds the side, -1 the owner did not hold the side
--
-- Safe to run twice: a repeat finds the level (or the owner) gone and answers 1 or -1.
local key = KEYS[1]
local owner, level, final, side, publish, channel = ARGV[1], ARGV[2], ARGV[3] == '1', ARGV[4], ARGV[5], ARGV[6]
local now = rw_now()
local s, err = rw_load(key, now)
if not s then
  return err
end
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
  rw_store(key, now, s)
  return -1
end
held.levels = rw_remove(held.levels, level)
if not final and held.levels ~= '' then
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
rw_store(key, now, s)
if side == 'x' or s.nreaders == 0 then
  local next, writer = nil, false
  for o, w in pairs(s.waiters) do
    if next == nil or w.ticket < next.ticket then
      next, writer = {owner = o, ticket = w.ticket}, true
    end
  end
  for o, w in pairs(s.rwaiters) do
    if next == nil or w.ticket < next.ticket then
      next, writer = {owner = o, ticket = w.ticket}, false
    end
  end
  if writer then
    redis.call(publish, channel, next.owner)
  elseif next then
    redis.call(publish, channel, '*')
  end
end
return 0
