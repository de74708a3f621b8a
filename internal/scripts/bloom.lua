-- bloom.lua: a BloomFilter's bitmap (a STRING at the object key) and its configuration (a HASH beside
-- it, fields bits, hashes, insertions, fpr, hash: the number of bits m, of hash functions k, the
-- expected insertions and false-positive rate they were sized for, and the element hash). Clients
-- hash elements themselves; every write of bits first checks that the configuration they were
-- computed for is the one in Redis (reads are a MULTI of HMGET and BITFIELD_RO, checked after).
--
-- KEYS[1]  the bitmap
-- KEYS[2]  the configuration
-- ARGV[1]  the operation:
--            "init"  ARGV[2..6] = bits, hashes, insertions, fpr, hash: create the configuration if
--                    there is none; returns 1 created, 0 the same bits, hashes and hash exist
--            "add"   ARGV[2..4] = bits, hashes, hash; ARGV[5..] = the ARGV[3] bits of each element:
--                    set them; returns how many elements had a bit clear
--            "count" returns {bits, hashes, BITCOUNT}
--
-- errors   "NOTINIT" no configuration (add, count); "CONFIG <bits> <hashes> <hash>" another
--          configuration (init, add); WRONGTYPE, nothing changed, if either key holds another
--          type, or (init) the bitmap exists without a configuration
--
-- "add" is sent once (the caller marks it NoRetry): a repeat would answer 0 new elements.
local bitmap, config, op = KEYS[1], KEYS[2], ARGV[1]
local c = redis.call('HMGET', config, 'bits', 'hashes', 'hash')
if op == 'init' then
  if not c[1] then
    if redis.call('EXISTS', bitmap) == 1 then
      return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
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
  return {c[1], c[2], redis.call('BITCOUNT', bitmap)}
end
if c[1] ~= ARGV[2] or c[2] ~= ARGV[3] or c[3] ~= ARGV[4] then
  return redis.error_reply('CONFIG ' .. c[1] .. ' ' .. tostring(c[2]) .. ' ' .. tostring(c[3]))
end
-- "add": one BITFIELD, "SET u1 <bit> 1" per bit (at most 1,950 bits: 7,800 arguments, within
-- Lua's unpack limit of 8,000), which answers each bit's old value.
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
