-- latch_delete.lua: Redisson CountDownLatch delete (reference §11).
--
-- KEYS[1]  the count
-- KEYS[2]  the channel
-- ARGV[1]  the new-count message (1)
-- ARGV[2]  publish command
--
-- returns  1 a count was deleted (and the message published), 0 none existed
--
-- Safe to run twice: the repeat deletes nothing and publishes nothing.
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
