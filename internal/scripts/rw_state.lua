-- rw_state.lua: what a ReadWriteLock looks like now, for queries; deletes lapsed fields, as every
-- script that loads the hash does. Format: rw_value.lua.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  side "r" or "x" and ARGV[2] owner id: whose levels to count ("" none)
--
-- returns  {writer held 1/0, live readers, ms until the latest holder's lease ends (0 if free),
--          levels of ARGV[2] on side ARGV[1]}
--
-- Safe to run twice: it only deletes what has lapsed.
local key = KEYS[1]
local side, owner = ARGV[1], ARGV[2]
local now = rw_now()
local s, err = rw_load(key, now)
if not s then
  return err
end
local levels = 0
if side == 'r' and s.readers[owner] then
  levels = rw_count(s.readers[owner].levels)
elseif side == 'x' and s.writer and s.writer.owner == owner then
  levels = rw_count(s.writer.levels)
end
local ttl = -3 - rw_pttl(now, s)
local w = 0
if s.writer then
  w = 1
end
return {w, s.nreaders, ttl, levels}
