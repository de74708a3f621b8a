-- rw_write_acquire.lua: Redisson WriteLock acquire (reference §4.4).
--
-- KEYS[1]  the rwlock HASH
-- ARGV[1]  lease in ms
-- ARGV[2]  writer owner "<uuid>:<threadId>:write"
--
-- returns  nil acquired (re-entry extends the TTL by the lease: PTTL + lease); integer: PTTL
--
-- Not safe to run twice (a repeat re-enters); sent without retry, as Redisson does.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  local remain = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], remain + tonumber(ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])
