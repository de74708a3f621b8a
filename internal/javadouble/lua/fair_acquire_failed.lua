-- fair_acquire_failed.lua: Redisson FairLock give-up (acquireFailed, reference §3.3).
--
-- KEYS[1]  the queue LIST
-- KEYS[2]  the timeout ZSET
-- ARGV[1]  owner "<uuid>:<threadId>"
-- ARGV[2]  the wait time in ms used when queueing (threadWaitTime)
--
-- returns  nil
--
-- Not idempotent when the owner is still queued (it only is on the first run: the run removes it);
-- a second run finds the owner gone and changes nothing.
local queue = redis.call('lrange', KEYS[1], 0, -1)
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do
  i = i + 1
end
if i <= #queue then
  for j = i + 1, #queue do
    redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[j])
  end
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
return nil
