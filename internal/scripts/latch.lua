-- latch.lua: set or count down a CountDownLatch. The latch is a STRING integer at the object key,
-- absent when it is zero (never set, or counted down to zero: then it can be set again).
--
-- KEYS[1]  the count
-- KEYS[2]  the request's record: its answer, kept ARGV[5] ms
-- KEYS[3]  the round: how many times the count reached zero (never deleted), so that a waiter that
--          reads the count only after the latch was set again still sees that its round ended
-- ARGV[1]  what: "s" set the count to ARGV[2] if it is zero; "d" count down by one
-- ARGV[2]  "s": the count (≥ 1)
-- ARGV[3]  publish command: PUBLISH or SPUBLISH
-- ARGV[4]  the latch's wake-up channel, shared by its Clients: reaching zero publishes ARGV[7] there
-- ARGV[5]  ms to keep the request's record: the waiter timeout, at least 10s or twice the go-redis
--          ReadTimeout (a copy re-sent after a lost reply must find it)
-- ARGV[6]  "1" if this copy is a re-send after an unknown outcome (see send.go), else "0"
-- ARGV[7]  the message of reaching zero: "*" (this package's waiters), or Java Redisson's "0"
-- ARGV[8]  the message of a count set, or "" for none: Java Redisson's "1" (WithRedissonCompat)
--
-- returns  "s": 1 set, 0 the count was not zero; "d": the count after it (0 also when it was zero
--          already); a WRONGTYPE error if the key holds anything but a positive integer; an UNKNOWN
--          error: a re-send that finds no record (below)
--
-- Safe to run twice: a repeat finds the request's record and answers what the first run answered,
-- changing nothing (a late copy of a set cannot arm a latch again once it reached zero). The record
-- is needed: the count has no identity, so the state cannot tell whether a count down, or a set,
-- was this request's. It lasts ARGV[5]. A re-send (ARGV[6]) that finds no record applies
-- nothing and answers UNKNOWN (WRONGTYPE if the name holds another kind, which refused the first
-- copy too): the first copy may never have run, may still be travelling, or may
-- have run longer ago than its record lives; so no copy applies twice.
local key, record = KEYS[1], KEYS[2]
local what, n, publish, channel, keepMs = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], tonumber(ARGV[5])
local done = redis.call('GET', record)
if done then
  return tonumber(done)
end
local round = redis.call('GET', KEYS[3]) -- WRONGTYPE on a hash, ...: checked before any write
if round and (not string.match(round, '^%d+$') or #round > 15) then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local v = redis.call('GET', key) -- WRONGTYPE on a hash, list, ...: not a latch
local count = 0
if v then
  -- "0" is an open latch, as absent is: Java Redisson's trySetCount(0) may store it.
  if not string.match(v, '^%d+$') or #v > 16 or tonumber(v) > 9007199254740991 then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
  count = tonumber(v)
end
if ARGV[6] == '1' then
  -- Checked after the type (read only): a name holding another kind refused the first copy too.
  return redis.error_reply('UNKNOWN the first copy of this request left no record')
end
local out
if what == 's' then
  out = 0
  if count == 0 then
    redis.call('SET', key, n)
    out = 1
    if ARGV[8] ~= '' then
      redis.call(publish, channel, ARGV[8])
    end
  end
else
  out = 0
  if count > 1 then
    out = redis.call('DECR', key)
  elseif count == 1 then
    redis.call('DEL', key)
    redis.call('INCR', KEYS[3])
    redis.call(publish, channel, ARGV[7])
  end
end
redis.call('SET', record, out, 'PX', keepMs)
return out
