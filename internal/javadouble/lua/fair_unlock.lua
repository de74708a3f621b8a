-- fair_unlock.lua: Redisson FairLock unlock with the unlock latch (reference §3.4).
--
-- KEYS[1]  the lock HASH
-- KEYS[2]  the queue LIST
-- KEYS[3]  the timeout ZSET
-- KEYS[4]  the channel prefix redisson_lock__channel:{name}; a waiter's channel is prefix:<owner>
-- KEYS[5]  the unlock latch redisson_unlock_latch:{name}:<requestId>
-- ARGV[1]  the unlock message (0)
-- ARGV[2]  lease in ms, the TTL set on a partial unlock
-- ARGV[3]  owner "<uuid>:<threadId>"
-- ARGV[4]  now, client clock in ms
-- ARGV[5]  publish command
-- ARGV[6]  TTL of the unlock latch in ms
--
-- returns  1 released (or the lock key was already gone), 0 still held, nil not the owner
--
-- Safe to run twice with the same request id (the latch answers the repeat).
local done = redis.call('get', KEYS[5])
if done ~= false then
  return tonumber(done)
end
local now = tonumber(ARGV[4])
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if head == false then
    break
  end
  local deadline = tonumber(redis.call('zscore', KEYS[3], head))
  if deadline == nil or deadline > now then
    break
  end
  redis.call('zrem', KEYS[3], head)
  redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 then
  local head = redis.call('lindex', KEYS[2], 0)
  if head ~= false then
    redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1])
  end
  redis.call('set', KEYS[5], 1, 'px', ARGV[6])
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[6])
  return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
local head = redis.call('lindex', KEYS[2], 0)
if head ~= false then
  redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1])
end
return 1
