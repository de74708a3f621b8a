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
-- "range" and "bytes" are not safe to run twice (a repeat could undo a change made in between):
-- they are sent once (the caller marks them NoRetry). "length" only reads.
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local key, op = KEYS[1], ARGV[1]
local t = redis.call('TYPE', key)['ok']
if t ~= 'string' and t ~= 'none' then
  return redis.error_reply(WRONGTYPE)
end
if op == 'bytes' then
  if ARGV[2] == '' then
    redis.call('DEL', key)
  else
    redis.call('SET', key, ARGV[2])
  end
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
-- "range", written from the highest bit down: if the server will not let the string grow that long
-- (proto-max-bulk-len), the first write fails and nothing is changed.
local from, to, bit = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
if bit == '0' then
  to = math.min(to, redis.call('STRLEN', key) * 8)
end
local head = math.min(to, math.ceil(from / 8) * 8) -- bits [from, head) precede the whole bytes
local last = math.floor(to / 8)                    -- whole bytes [head / 8, last)
for i = to - 1, math.max(head, last * 8), -1 do   -- bits after the whole bytes
  redis.call('SETBIT', key, i, bit)
end
if head / 8 < last then
  local fill = string.char(bit == '1' and 255 or 0)
  local chunk = 1048576 -- 1 MiB per SETRANGE, the last chunk first
  local off = last
  while off > head / 8 do
    local n = math.min(chunk, off - head / 8)
    off = off - n
    redis.call('SETRANGE', key, off, string.rep(fill, n))
  end
end
for i = head - 1, from, -1 do
  redis.call('SETBIT', key, i, bit)
end
return 0
