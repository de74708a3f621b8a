-- bitset.lua: the BitSet operations that are not one Redis command. The BitSet is a STRING at the
-- object key, bit i being bit 7 - i % 8 of byte i / 8 (Redis's SETBIT order); absent means empty.
--
-- KEYS[1]  the bitmap
-- ARGV[1]  the operation:
--            "range"  set (ARGV[4] = "1") or clear ("0") the bits [ARGV[2], ARGV[3]); clearing
--                     never lengthens the string; returns 0
--            "length" returns the index of the highest set bit + 1 (0 if none)
--            "bytes"  replace the string by ARGV[2]; returns 0
-- ARGV[2], ARGV[3]  bit indices, 0 ≤ ARGV[2] ≤ ARGV[3] ≤ 2^32 (checked by the caller)
--
-- returns  as above; a WRONGTYPE error, nothing changed, if the key holds another type
--
-- "range" and "bytes" are sent once (the caller marks them NoRetry): a repeat could undo a change
-- made in between.
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local key, op = KEYS[1], ARGV[1]
local t = redis.call('TYPE', key)['ok']
if t ~= 'string' and t ~= 'none' then
  return redis.error_reply(WRONGTYPE)
end
if op == 'bytes' then
  redis.call('SET', key, ARGV[2])
  return 0
end
if op == 'length' then
  local pos = redis.call('STRLEN', key)
  while pos > 0 do -- the last non-zero byte, read backwards 4 KiB at a time
    local from = math.max(0, pos - 4096)
    local s = redis.call('GETRANGE', key, from, pos - 1)
    for j = #s, 1, -1 do
      local b = string.byte(s, j)
      if b ~= 0 then
        local low = 0 -- the lowest-order set bit of b is the highest bit index of the byte
        while b % 2 == 0 do
          b = b / 2
          low = low + 1
        end
        return (from + j - 1) * 8 + 8 - low
      end
    end
    pos = from
  end
  return 0
end
-- "range"
local from, to, bit = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
if bit == '0' then
  to = math.min(to, redis.call('STRLEN', key) * 8)
end
local i = from
while i < to and i % 8 ~= 0 do -- the first byte's bits
  redis.call('SETBIT', key, i, bit)
  i = i + 1
end
local last = math.floor(to / 8) -- whole bytes [i / 8, last), 1 MiB per SETRANGE
if i < to and i / 8 < last then
  local fill = string.char(bit == '1' and 255 or 0)
  local chunk = 1048576
  local full = string.rep(fill, chunk)
  for off = i / 8, last - 1, chunk do
    local n = math.min(chunk, last - off)
    redis.call('SETRANGE', key, off, n == chunk and full or string.rep(fill, n))
  end
  i = last * 8
end
while i < to do -- the last byte's bits
  redis.call('SETBIT', key, i, bit)
  i = i + 1
end
return 0
