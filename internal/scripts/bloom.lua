-- bloom.lua: a BloomFilter's configuration (a HASH at the object key, fields bits, hashes,
-- insertions, fpr, hash: the number of bits m, of hash functions k, the expected insertions and
-- false-positive rate they were sized for, and the element hash) and its bits (a STRING beside it).
-- The configuration is at the object key so that a lock or another object under the same name is
-- refused (WRONGTYPE) either way. Clients hash elements themselves; every write of bits first checks
-- that the configuration they were computed for is the one in Redis (reads are a pipeline of HMGET
-- and BITFIELD_RO, checked on the reply).
--
-- KEYS[1]  the configuration
-- KEYS[2]  the bits
-- ARGV[1]  the operation:
--            "init"  ARGV[2..6] = bits, hashes, insertions, fpr, hash: create the configuration if
--                    there is none; returns 1 created, 0 the same bits, hashes and hash exist
--            "add"   ARGV[2..4] = bits, hashes, hash; ARGV[5..] = the ARGV[3] bits of each element:
--                    set them; returns how many elements had a bit clear
--            "count" returns {bits, hashes, insertions, fpr, hash, BITCOUNT}
--
-- errors   "NOTINIT" no configuration (add, count); "CONFIG <bits> <hashes> <hash>" another
--          configuration (init, add); WRONGTYPE, nothing changed, if a key holds another type, the
--          object key a hash that is not a well-formed configuration (init and count check every
--          field; add the three it compares), or (init) the bits exist without one
--
-- "add" is not safe to run twice (a repeat would answer 0 new elements): it is sent once (the
-- caller marks it NoRetry). "init" run twice answers 0 the second time: its caller also sends it
-- once.
local config, bitmap, op = KEYS[1], KEYS[2], ARGV[1]
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
-- config_ok checks all five fields as the Go decoder (decodeBloomConfig) does: canonical integers,
-- 1 ≤ bits ≤ 2^32, 1 ≤ hashes ≤ 100, insertions ≥ 1, 0 < fpr < 1, this package's hash.
local function config_ok(c)
  local int = '^[1-9]%d*$'
  if not (c[1] and c[2] and c[3] and c[4] and c[5]) or c[3] ~= 'xxh3-128' then
    return false
  end
  if not (string.match(c[1], int) and string.match(c[2], int) and string.match(c[4], int)) then
    return false
  end
  local fpr = tonumber(c[5])
  return #c[1] <= 10 and tonumber(c[1]) <= 4294967296 and #c[2] <= 3 and tonumber(c[2]) <= 100 and
    #c[4] <= 19 and fpr ~= nil and fpr > 0 and fpr < 1
end
local c
if op == 'add' then -- the fields it uses; the Client's parameters came from a checked configuration
  c = redis.call('HMGET', config, 'bits', 'hashes', 'hash')
else
  c = redis.call('HMGET', config, 'bits', 'hashes', 'hash', 'insertions', 'fpr')
end
if not c[1] and redis.call('EXISTS', config) == 1 then
  return redis.error_reply(WRONGTYPE) -- a hash of someone else's
end
if op ~= 'add' and c[1] and not config_ok(c) then
  return redis.error_reply(WRONGTYPE)
end
if op == 'init' then
  if not c[1] then
    if redis.call('EXISTS', bitmap) == 1 then
      return redis.error_reply(WRONGTYPE)
    end
    redis.call('HSET', config, 'bits', ARGV[2], 'hashes', ARGV[3], 'insertions', ARGV[4], 'fpr', ARGV[5], 'hash', ARGV[6])
    return 1
  end
  if c[1] == ARGV[2] and c[2] == ARGV[3] and c[3] == ARGV[6] then
    return 0
  end
  return redis.error_reply('CONFIG ' .. c[1] .. ' ' .. tostring(c[2]) .. ' ' .. tostring(c[3]))
end
if not c[1] then
  return redis.error_reply('NOTINIT the BloomFilter has no configuration')
end
if op == 'count' then
  return {c[1], c[2] or '', c[4] or '', c[5] or '', c[3] or '', redis.call('BITCOUNT', bitmap)}
end
if c[1] ~= ARGV[2] or c[2] ~= ARGV[3] or c[3] ~= ARGV[4] then
  return redis.error_reply('CONFIG ' .. c[1] .. ' ' .. tostring(c[2]) .. ' ' .. tostring(c[3]))
end
-- "add": one BITFIELD, "SET u1 <bit> 1" per bit (at most 1,950 bits: 7,800 arguments, within
-- Lua's unpack limit of 8,000), which answers each bit's old value. BITFIELD checks every offset
-- before it writes any, so a call is all or nothing.
local k = tonumber(ARGV[3])
local args, a = {}, 0
for i = 5, #ARGV do
  args[a + 1], args[a + 2], args[a + 3], args[a + 4] = 'SET', 'u1', ARGV[i], '1'
  a = a + 4
end
local old = redis.call('BITFIELD', bitmap, unpack(args))
local added = 0
for e = 0, #old / k - 1 do
  for j = e * k + 1, e * k + k do
    if old[j] == 0 then
      added = added + 1
      break
    end
  end
end
return added
