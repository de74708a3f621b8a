-- rw_read_acquire.lua: Redisson ReadLock acquire (reference §4.2).
--
-- KEYS[1]  the rwlock HASH (mode, owner -> read count, owner:write -> write count)
-- KEYS[2]  this thread's timeout-key prefix {name}:<uuid>:<threadId>:rwlock_timeout
-- ARGV[1]  lease in ms
-- ARGV[2]  reader owner "<uuid>:<threadId>"
-- ARGV[3]  writer owner of the same thread "<uuid>:<threadId>:write"
--
-- returns  nil acquired; integer: not acquired, PTTL of the hash
--
-- Not safe to run twice (a repeat adds a read hold); sent without retry, as Redisson does.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
  local remain = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(remain, tonumber(ARGV[1])))
  return nil
end
return redis.call('pttl', KEYS[1])
