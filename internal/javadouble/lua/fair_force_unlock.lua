-- fair_force_unlock.lua: Redisson FairLock forceUnlock (reference §3.4).
--
-- KEYS[1]  the lock HASH
-- KEYS[2]  the queue LIST
-- KEYS[3]  the timeout ZSET
-- KEYS[4]  the channel prefix redisson_lock__channel:{name}
-- ARGV[1]  the unlock message (0)
-- ARGV[2]  now, client clock in ms
-- ARGV[3]  publish command
--
-- returns  1 the lock key was deleted (head waiter notified), 0 nothing deleted
--
-- Safe to run twice: the second run finds no key and returns 0 (after purging stale heads again).
local now = tonumber(ARGV[2])
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
if redis.call('del', KEYS[1]) == 1 then
  local head = redis.call('lindex', KEYS[2], 0)
  if head ~= false then
    redis.call(ARGV[3], KEYS[4] .. ':' .. head, ARGV[1])
  end
  return 1
end
return 0
