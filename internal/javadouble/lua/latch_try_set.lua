-- latch_try_set.lua: Redisson CountDownLatch trySetCount (reference §11).
--
-- KEYS[1]  the count (STRING integer)
-- KEYS[2]  the channel redisson_countdownlatch__channel__{name}
-- ARGV[1]  the new-count message (1)
-- ARGV[2]  the count
-- ARGV[3]  publish command
--
-- returns  1 set, 0 a count exists
--
-- Safe to run twice: the second run finds the key.
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[1], ARGV[2])
  redis.call(ARGV[3], KEYS[2], ARGV[1])
  return 1
end
return 0
