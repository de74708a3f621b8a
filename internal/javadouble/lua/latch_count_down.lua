-- latch_count_down.lua: Redisson CountDownLatch countDown (reference §11).
--
-- KEYS[1]  the count
-- KEYS[2]  the channel
-- ARGV[1]  the zero-count message (0)
-- ARGV[2]  publish command
--
-- returns  the count after the decrement (<= 0: the key was deleted)
--
-- Not safe to run twice (a repeat counts down again); sent without retry, as Redisson does.
local value = redis.call('decr', KEYS[1])
if value <= 0 then
  redis.call('del', KEYS[1])
end
if value == 0 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return value
