-- bloom.lua: a BloomFilter's bitmap (a STRING at the object key) and its configuration (a HASH beside
-- it, fields bits, hashes, insertions, fpr, hash: the number of bits m, of hash functions k, the
-- expected insertions and false-positive rate they were sized for, and the element hash). Clients
-- hash elements themselves; every operation on the bits first checks that the configuration it was
-- computed for is the one in Redis.
--
-- KEYS[1]  the bitmap
-- KEYS[2]  the configuration
-- ARGV[1]  the operation:
--            "init"  ARGV[2..6] = bits, hashes, insertions, fpr, hash: create the configuration if
--                    there is none; returns 1 created, 0 the same bits, hashes and hash exist
--            "add"   ARGV[2..4] = bits, hashes, hash; ARGV[5] = bit indices, 4 bytes each, big-endian,
--                    ARGV[3] per element: set them; returns how many elements had a bit clear
--            "has"   as "add", reading: returns one character per element, "1" if all its bits are
--                    set, else "0"
--            "count" returns {bits, hashes, BITCOUNT}
--
-- errors   "NOTINIT" no configuration (add, has, count); "CONFIG <bits> <hashes> <hash>" another
--          configuration (init, add, has); WRONGTYPE, nothing changed, if either key holds another
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
local k, packed = tonumber(ARGV[3]), ARGV[5]
local byte = string.byte
local n = #packed / 4
local out, added = {}, 0
for e = 1, n / k do
  local all = true
  local base = (e - 1) * k * 4 + 1
  for j = 0, k - 1 do
    local b1, b2, b3, b4 = byte(packed, base + 4 * j, base + 4 * j + 3)
    local bit = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    if op == 'add' then
      if redis.call('SETBIT', bitmap, bit, 1) == 0 then
        all = false
      end
    elseif redis.call('GETBIT', bitmap, bit) == 0 then
      all = false
      break -- the element's other bits need not be read
    end
  end
  if op == 'add' then
    if not all then
      added = added + 1
    end
  else
    out[e] = all and '1' or '0'
  end
end
if op == 'add' then
  return added
end
return table.concat(out)
