-- fenced_set.lua: a write to a fenced value, accepted only if its fencing token is not older than the
-- token of the last write accepted (see FencedLock).
--
-- KEYS[1]  the value: a hash with fields "value" and "token"
-- ARGV[1]  the new value
-- ARGV[2]  the writer's fencing token
--
-- returns  1 written; 0 refused: a write with a newer token was accepted before (nothing changed)
--
-- Safe to run twice: the repeat carries the same token, which is not older than itself.
-- A key of another type is refused with WRONGTYPE before any write.
local last = redis.call('HGET', KEYS[1], 'token')
if last and tonumber(last) > tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[1], 'value', ARGV[1], 'token', ARGV[2])
return 1
