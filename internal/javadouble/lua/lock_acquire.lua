-- lock_acquire.lua: Redisson RLock acquire (reference §1.2).
--
-- KEYS[1]  the lock HASH (owner -> hold count)
-- ARGV[1]  lease in ms
-- ARGV[2]  owner "<uuid>:<threadId>"
--
-- returns  nil: acquired (new or re-entered, TTL reset to the lease); integer: not acquired, the
--          PTTL of the lock key (-1 when it has no expiry)
--
-- Not safe to run twice (a repeat re-enters: HINCRBY). Redisson sends it without retry; so does the double.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
