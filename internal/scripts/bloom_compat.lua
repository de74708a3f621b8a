-- bloom_compat.lua: a BloomFilter in Java Redisson's layout (WithRedissonCompat), shared with
-- RBloomFilter: the bits are a STRING at the object key, the configuration a HASH beside it
-- ("{name}:config", Redisson's suffixName) with fields size, hashIterations, expectedInsertions and
-- falseProbability (Java's Long.toString, Integer.toString, Long.toString and Double.toString). The
-- bits key is the same for every configuration, so a Client whose parameters are stale must write
-- nothing: "add" checks the configuration before setting a bit, as Redisson's own add script does
-- (which fails on a changed size or hashIterations). Lookups are a pipeline of HMGET and BITFIELD_RO,
-- checked on the reply (they write nothing).
--
-- KEYS[1]  the configuration
-- KEYS[2]  the bits (the object key)
-- ARGV[1]  the operation:
--            "init"   ARGV[2..5] = size, hashIterations, expectedInsertions, falseProbability: create
--                     the configuration if there is none (the bits are left as they are, as Redisson
--                     does); returns 1 created, 0 one with the same size and hashIterations (or the
--                     same expectedInsertions and falseProbability) exists
--            "add"    ARGV[2..3] = size, hashIterations, ARGV[4..] the bit indices of the elements,
--                     hashIterations per element: if the configuration is that one, set them;
--                     returns how many elements had a bit clear (were new)
--            "delete" ARGV[2..3] = size, hashIterations (further arguments of "delete" and "count"
--                     are ignored): delete the configuration and the bits if the
--                     configuration is that one; returns 1 if deleted, 0 if there is no configuration
--            "count"  ARGV[2..3] = size, hashIterations: returns {size, hashIterations,
--                     expectedInsertions, falseProbability, BITCOUNT of the bits}
--
-- errors   "NOTINIT" no configuration (add, count); "CONFIG <size> <hashIterations>
--          <expectedInsertions> <falseProbability>" another configuration, the stored one (init,
--          add, delete, count); WRONGTYPE, nothing changed, if the bits key holds another type or the
--          configuration key another type or a hash that is not a well-formed configuration. "add"
--          writes nothing unless every index can be set (it reads the highest one first: a server
--          limit such as proto-max-bulk-len refuses it before any write).
--
-- "init", "add" and "delete" are not safe to run twice (a repeat answers 0): they are sent once (the
-- caller marks them NoRetry). "count" is.
local config, bits, op = KEYS[1], KEYS[2], ARGV[1]
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'

-- config_ok checks the four fields as the Go decoder (decodeRedissonBloomConfig) does: canonical
-- integers, 1 ≤ size ≤ 4294967294 (Redisson's getMaxSize), 1 ≤ hashIterations ≤ 1074 (the most
-- Redisson's tryInit computes), 1 ≤ expectedInsertions ≤ 2^63-1, and falseProbability written as
-- Java writes a double ("0.01", "1.0E-4"), in [0, 1).
local function config_ok(c)
  local int = '^[1-9]%d*$'
  if not (c[1] and c[2] and c[3] and c[4]) then
    return false
  end
  if not (string.match(c[1], int) and string.match(c[2], int) and string.match(c[3], int)) then
    return false
  end
  if not (string.match(c[4], '^%-?%d+%.%d+$') or string.match(c[4], '^%-?%d+%.%d+E%-?%d+$')) then
    return false
  end
  local p = tonumber(c[4])
  return #c[1] <= 10 and tonumber(c[1]) <= 4294967294 and #c[2] <= 4 and tonumber(c[2]) <= 1074 and
    (#c[3] < 19 or (#c[3] == 19 and c[3] <= '9223372036854775807')) and p ~= nil and p >= 0 and p < 1
end

local t = redis.call('TYPE', bits)['ok']
if t ~= 'string' and t ~= 'none' then
  return redis.error_reply(WRONGTYPE)
end
local c = redis.pcall('HMGET', config, 'size', 'hashIterations', 'expectedInsertions', 'falseProbability')
if c['err'] then -- another type at the configuration key
  return c
end
if not c[1] then
  if redis.call('EXISTS', config) == 1 then
    return redis.error_reply(WRONGTYPE) -- a hash of someone else's
  end
elseif not config_ok(c) then
  return redis.error_reply(WRONGTYPE)
end
local same = c[1] == ARGV[2] and c[2] == ARGV[3]
local function mismatch()
  return redis.error_reply('CONFIG ' .. c[1] .. ' ' .. c[2] .. ' ' .. c[3] .. ' ' .. c[4])
end

if op == 'init' then
  if not c[1] then
    redis.call('HSET', config, 'size', ARGV[2], 'hashIterations', ARGV[3], 'expectedInsertions', ARGV[4],
      'falseProbability', ARGV[5])
    return 1
  end
  -- The same parameters (Java may size them one bit apart where the logarithms of the two sides
  -- differ in the last place: its tryInit answers false whatever the configuration is).
  if same or (c[3] == ARGV[4] and tonumber(c[4]) == tonumber(ARGV[5])) then
    return 0
  end
  return mismatch()
end
if not c[1] then
  if op == 'delete' then
    return 0
  end
  return redis.error_reply('NOTINIT the BloomFilter has no configuration')
end
if not same then
  return mismatch()
end
if op == 'delete' then
  redis.call('DEL', config, bits)
  return 1
elseif op == 'count' then
  return {c[1], c[2], c[3], c[4], redis.call('BITCOUNT', bits)}
end
-- "add": the highest index first, read, so that a limit refuses the call before any write.
local k = tonumber(ARGV[3])
local top = 0
for i = 4, #ARGV do
  local b = tonumber(ARGV[i])
  if b > top then
    top = b
  end
end
redis.call('GETBIT', bits, top)
local added, clear = 0, false
for i = 4, #ARGV do
  if redis.call('SETBIT', bits, ARGV[i], 1) == 0 then
    clear = true
  end
  if (i - 3) % k == 0 then
    if clear then
      added = added + 1
    end
    clear = false
  end
end
return added
