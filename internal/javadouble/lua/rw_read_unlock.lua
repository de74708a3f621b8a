-- rw_read_unlock.lua: Redisson ReadLock unlock with the unlock latch (reference §4.3).
--
-- KEYS[1]  the rwlock HASH
-- KEYS[2]  the channel redisson_rwlock:{name}
-- KEYS[3]  this thread's timeout-key prefix {name}:<uuid>:<threadId>:rwlock_timeout
-- KEYS[4]  the key prefix {name} (a holder's timeout keys are prefix:<field>:rwlock_timeout:<n>)
-- KEYS[5]  the unlock latch redisson_unlock_latch:{name}:<requestId>
-- ARGV[1]  the read-unlock message (0)
-- ARGV[2]  reader owner "<uuid>:<threadId>"
-- ARGV[3]  publish command
-- ARGV[4]  TTL of the unlock latch in ms
--
-- returns  1 the hash was deleted (message published), 0 still locked, nil not a read holder
--
-- Safe to run twice with the same request id (the latch answers the repeat).
local done = redis.call('get', KEYS[5])
if done ~= false then
  return tonumber(done)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call(ARGV[3], KEYS[2], ARGV[1])
  redis.call('set', KEYS[5], 1, 'px', ARGV[4])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left == 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (left + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local maxRemain = -3
  local fields = redis.call('hkeys', KEYS[1])
  for _, field in ipairs(fields) do
    local count = tonumber(redis.call('hget', KEYS[1], field))
    if type(count) == 'number' then
      for i = count, 1, -1 do
        local remain = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
        maxRemain = math.max(remain, maxRemain)
      end
    end
  end
  if maxRemain > 0 then
    redis.call('pexpire', KEYS[1], maxRemain)
    redis.call('set', KEYS[5], 0, 'px', ARGV[4])
    return 0
  end
  if mode == 'write' then
    redis.call('set', KEYS[5], 0, 'px', ARGV[4])
    return 0
  end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1
