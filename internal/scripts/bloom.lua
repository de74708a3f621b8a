-- bloom.lua: a BloomFilter's configuration (a HASH at the object key, fields bits, hashes,
-- insertions, fpr, hash: the number of bits m, of hash functions k, the expected insertions and
-- false-positive rate they were sized for, and the element hash) and its bits (a STRING beside it,
-- named after m and k: "<key>:~bf:<m>:<k>"). The configuration is at the object key so that a lock
-- or another object under the same name is refused (WRONGTYPE) either way. Bits are keyed by their
-- parameters so that a Client whose parameters are stale (the filter was deleted and made again with
-- others) writes where nobody reads: adds are a MULTI of HMGET (the configuration) and BITFIELD SET,
-- checked on the reply, and a Client that finds it wrote bits for a configuration that is not the
-- current one removes them ("drop"). Lookups are a pipeline of HMGET and BITFIELD_RO.
--
-- KEYS[1]  the configuration
-- KEYS[2]  the bits for the parameters ARGV[2], ARGV[3]
-- ARGV[1]  the operation:
--            "init"   ARGV[2..6] = bits, hashes, insertions, fpr, hash: create the configuration if
--                     there is none (deleting bits left under KEYS[2] by Clients with stale
--                     parameters); returns 1 created, 0 the same bits, hashes and hash exist
--            "drop"   ARGV[2..4] = bits, hashes, hash: delete KEYS[2] unless the configuration is
--                     that one; returns 1 if deleted
--            "delete" ARGV[2..4] = bits, hashes, hash: delete the configuration and KEYS[2] if the
--                     configuration is that one, KEYS[2] alone if there is none; returns 1 if there
--                     was a configuration
--            "count"  ARGV[2..4] = bits, hashes, hash: returns {bits, hashes, insertions, fpr, hash,
--                     BITCOUNT of KEYS[2]}
--
-- errors   "NOTINIT" no configuration (count); "CONFIG <bits> <hashes> <hash> <insertions> <fpr>"
--          another configuration, the stored one (init, delete, count); WRONGTYPE, nothing changed,
--          if a key holds another type or the object key a hash that is not a well-formed
--          configuration
--
-- "init" and "delete" are not safe to run twice (a repeat answers 0): they are sent once (the
-- caller marks them NoRetry). "drop" and "count" are.
local config, bits, op = KEYS[1], KEYS[2], ARGV[1]
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

local c = redis.pcall('HMGET', config, 'bits', 'hashes', 'hash', 'insertions', 'fpr')
if op == 'drop' then -- whatever the object key holds, unless it is this very configuration
  if not c['err'] and config_ok(c) and c[1] == ARGV[2] and c[2] == ARGV[3] and c[3] == ARGV[4] then
    return 0
  end
  return redis.call('DEL', bits)
end
if c['err'] then -- another type at the object key
  return c
end
if not c[1] then
  if redis.call('EXISTS', config) == 1 then
    return redis.error_reply(WRONGTYPE) -- a hash of someone else's
  end
elseif not config_ok(c) then
  return redis.error_reply(WRONGTYPE)
end
local hash = op == 'init' and ARGV[6] or ARGV[4]
local same = c[1] == ARGV[2] and c[2] == ARGV[3] and c[3] == hash
local function mismatch()
  return redis.error_reply('CONFIG ' .. c[1] .. ' ' .. c[2] .. ' ' .. c[3] .. ' ' .. c[4] .. ' ' .. c[5])
end

if op == 'init' then
  if not c[1] then
    -- HSET first: a script's first write lifts Redis's out-of-memory check for the rest of it.
    redis.call('HSET', config, 'bits', ARGV[2], 'hashes', ARGV[3], 'insertions', ARGV[4], 'fpr', ARGV[5], 'hash', ARGV[6])
    redis.call('DEL', bits) -- bits left by a Client with stale parameters (the namespace is ours)
    return 1
  end
  if same then
    return 0
  end
  return mismatch()
elseif op == 'delete' then
  if not c[1] then
    redis.call('DEL', bits)
    return 0
  end
  if not same then
    return mismatch()
  end
  redis.call('DEL', config, bits)
  return 1
end
-- "count"
if not c[1] then
  return redis.error_reply('NOTINIT the BloomFilter has no configuration')
end
if not same then
  return mismatch()
end
return {c[1], c[2], c[4], c[5], c[3], redis.call('BITCOUNT', bits)}
