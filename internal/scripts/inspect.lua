-- inspect.lua: one consistent snapshot of everything stored under a name, for Client.Inspect. It
-- decodes nothing but a ReadWriteLock's hash (through rw_load, the one Lua decoder of that format,
-- prepended from rw_value.lua); every other value is returned raw for the Go decoders of its format
-- (decodeLockValue, decodeRedissonLock, decodeRedissonRW, the integer of a Semaphore or latch).
--
-- KEYS[1]  the object key
-- KEYS[2]  a Lock's wait queue (:~q), KEYS[3] a FairLock's (:~fq), KEYS[4] a FencedLock's (:~tq)
-- KEYS[5]  a FencedLock's token counter (:~fence)
-- KEYS[6]  a Semaphore's waiters (:~sw), KEYS[7] its leased permits (:~sl)
-- KEYS[8]  a CountDownLatch's rounds (:~lr)
-- KEYS[9]  Java Redisson's RFairLock queue, KEYS[10] its waiters' deadlines
-- KEYS[11] Java Redisson's RPermitExpirableSemaphore leases ("{key}:timeout")
-- KEYS[12] Java Redisson's RBloomFilter configuration ("{key}:config")
-- KEYS[13] Java Redisson's RFencedLock token counter ("redisson_lock_token:{key}")
-- ARGV[1]  unused ("" ): the script takes no arguments
--
-- returns  {server time in µs (string), TYPE of KEYS[1], PTTL of KEYS[1] (ms), its value if a string
--          (else false), its HGETALL if a hash that is not a ReadWriteLock's (else {}), the
--          ReadWriteLock decoded (else {}): {writer {owner, levels, ms left} or {}, readers {owner,
--          levels, ms left, ...}, waiting writers {owner, ticket, ms until its registration lapses,
--          ...}, waiting readers {the same}}, then KEYS[2..4] WITHSCORES, KEYS[5] GET, KEYS[6] HGETALL, KEYS[7] WITHSCORES,
--          KEYS[8] GET, KEYS[9] LRANGE, KEYS[10] and KEYS[11] WITHSCORES, KEYS[12] EXISTS, KEYS[13]
--          GET}; an
--          auxiliary key of another type than expected reads as absent (false or {}).
--
-- Safe to run twice: it changes nothing but what rw_load deletes in a ReadWriteLock's hash (fields
-- whose time has passed, and its counters), as every ReadWriteLock script does; rw_load runs only on
-- a hash with a holder or waiter field or the three counters, never on a foreign hash.
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(nowUs / 1000)
local key = KEYS[1]
local typ = redis.call('TYPE', key)['ok']
local pttl = redis.call('PTTL', key)
local str, flat, rw = false, {}, {}
if typ == 'string' then
  str = redis.call('GET', key)
elseif typ == 'hash' then
  -- rw_load writes (it deletes lapsed fields and sets the counters): run it only on what a
  -- ReadWriteLock script left, a hash with a holder or waiter field, or with its three counters
  -- (every hash the scripts leave has them), never on foreign data such as {nr = 3}.
  flat = redis.call('HGETALL', key)
  local ours, counters = false, 0
  for i = 1, #flat, 2 do
    local f = flat[i]
    if f == 'w' or string.sub(f, 1, 2) == 'r:' or string.sub(f, 1, 3) == 'ww:' or string.sub(f, 1, 3) == 'wr:' then
      ours = true
    elseif f == 'nr' or f == 'nww' or f == 'wwd' then
      counters = counters + 1
    end
  end
  local s = nil
  if ours or counters == 3 then
    s = rw_load(key, nowMs)
  end
  if s then
    local writer, readers, ww, wr = {}, {}, {}, {}
    if s.writer then
      writer = {s.writer.owner, rw_count(s.writer.levels), s.writer.expiry - nowMs}
    end
    for o, r in pairs(s.readers) do
      readers[#readers + 1] = o
      readers[#readers + 1] = rw_count(r.levels)
      readers[#readers + 1] = r.expiry - nowMs
    end
    for o, w in pairs(s.waiters) do
      ww[#ww + 1] = o
      ww[#ww + 1] = string.format('%d', w.ticket)
      ww[#ww + 1] = w.deadline - nowMs
    end
    for o, w in pairs(s.rwaiters) do
      wr[#wr + 1] = o
      wr[#wr + 1] = string.format('%d', w.ticket)
      wr[#wr + 1] = w.deadline - nowMs
    end
    rw = {writer, readers, ww, wr}
    flat = {}
    pttl = redis.call('PTTL', key) -- rw_load may have shortened the hash's life
  end
end
-- aux reads one auxiliary key with cmd, or answers absent if it holds another type.
local function aux(cmd, k, ...)
  local r = redis.pcall(cmd, k, ...)
  if type(r) == 'table' and r.err then
    if cmd == 'GET' then
      return false
    end
    return {}
  end
  return r
end
return {
  string.format('%d', nowUs), typ, pttl, str, flat, rw,
  aux('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES'),
  aux('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES'),
  aux('ZRANGE', KEYS[4], 0, -1, 'WITHSCORES'),
  aux('GET', KEYS[5]),
  aux('HGETALL', KEYS[6]),
  aux('ZRANGE', KEYS[7], 0, -1, 'WITHSCORES'),
  aux('GET', KEYS[8]),
  aux('LRANGE', KEYS[9], 0, -1),
  aux('ZRANGE', KEYS[10], 0, -1, 'WITHSCORES'),
  aux('ZRANGE', KEYS[11], 0, -1, 'WITHSCORES'),
  redis.call('EXISTS', KEYS[12]),
  aux('GET', KEYS[13]),
}
