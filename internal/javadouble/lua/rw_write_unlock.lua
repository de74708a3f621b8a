-- rw_write_unlock.lua: Redisson WriteLock unlock with the unlock latch (reference §4.5).
--
-- KEYS[1]  the rwlock HASH
-- KEYS[2]  the channel redisson_rwlock:{name}
-- KEYS[3]  the unlock latch redisson_unlock_latch:{name}:<requestId>
-- ARGV[1]  the write-unlock message (1)
-- ARGV[2]  lease in ms, the TTL set on a partial unlock
-- ARGV[3]  writer owner "<uuid>:<threadId>:write"
-- ARGV[4]  publish command
-- ARGV[5]  TTL of the unlock latch in ms
--
-- returns  1 write hold released (hash deleted, or downgraded to read without a message), 0 still
--          write-held, nil not the writer
--
-- Safe to run twice with the same request id (the latch answers the repeat).
local done = redis.call('get', KEYS[3])
if done ~= false then
  return tonumber(done)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call(ARGV[4], KEYS[2], ARGV[1])
  redis.call('set', KEYS[3], 1, 'px', ARGV[5])
  return nil
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[4], KEYS[2], ARGV[1])
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
