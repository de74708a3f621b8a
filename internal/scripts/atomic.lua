-- atomic.lua: the AtomicLong operations that read the value before writing it (int64_value.lua is
-- prepended). Adds are INCRBY, loads GET: no script.
--
-- KEYS[1]  the value
-- ARGV[1]  the operation:
--            "store"  set ARGV[2]; returns the old value
--            "cas"    set ARGV[3] if the value is ARGV[2]; returns 1 if set, else 0
--            "max"    set ARGV[2] if it is greater than the value; returns 1 if set, else 0
--            "min"    set ARGV[2] if it is less than the value; returns 1 if set, else 0
--            "getdel" delete the value; returns the old value
-- ARGV[2], ARGV[3]  canonical int64s (checked by the caller)
--
-- returns  as above; old values as strings (Lua numbers would lose precision); a WRONGTYPE error,
--          nothing changed, if the key holds anything but an int64
--
-- Not safe to run twice (a repeated store may undo a change made in between; a repeated cas
-- answers 0): it is sent once (the caller marks it NoRetry).
local key, op = KEYS[1], ARGV[1]
local v = int64_get(key)
if not v then
  return redis.error_reply(WRONGTYPE)
end
if op == 'store' then
  redis.call('SET', key, ARGV[2])
  return v
elseif op == 'getdel' then
  redis.call('DEL', key)
  return v
end
local set
if op == 'cas' then
  set = v == ARGV[2]
elseif op == 'max' then
  set = int64_less(v, ARGV[2])
else
  set = int64_less(ARGV[2], v)
end
if not set then
  return 0
end
redis.call('SET', key, op == 'cas' and ARGV[3] or ARGV[2])
return 1
