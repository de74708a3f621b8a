-- lock_unlock.lua: Redisson RLock unlock with the unlock latch (reference §0.4, §1.3).
--
-- KEYS[1]  the lock HASH
-- KEYS[2]  the lock channel redisson_lock__channel:{name}
-- KEYS[3]  the unlock latch redisson_unlock_latch:{name}:<requestId>
-- ARGV[1]  the unlock message (0)
-- ARGV[2]  lease in ms, the TTL set on a partial (re-entrant) unlock
-- ARGV[3]  owner "<uuid>:<threadId>"
-- ARGV[4]  publish command (publish or spublish)
-- ARGV[5]  TTL of the unlock latch in ms
--
-- returns  1 released (key deleted, message published), 0 hold count decremented (still held),
--          nil the caller is not the owner
--
-- Safe to run twice with the same request id: the second run finds the latch and returns its value.
local done = redis.call('get', KEYS[3])
if done ~= false then
  return tonumber(done)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
