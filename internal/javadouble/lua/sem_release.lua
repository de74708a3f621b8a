-- sem_release.lua: Redisson Semaphore release(n) (reference §9).
--
-- KEYS[1]  the permit count
-- KEYS[2]  the channel redisson_sc:{name}
-- ARGV[1]  n
-- ARGV[2]  publish command
--
-- returns  the new count (published on the channel)
--
-- Not safe to run twice (a repeat adds n more).
local value = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], value)
return value
