-- compat_rw_release.lua: release one level of a side of a ReadWriteLock in Java Redisson's
-- RReadWriteLock layout (a Client made WithRedissonCompat; format: compat_rw_value.lua) or the
-- owner's whole hold on that side, or undo an acquisition whose outcome is unknown, as Redisson's
-- unlocks do. A write release that frees the writer deletes the hash, or, if readers remain (a
-- downgrade), sets mode "read"; it publishes "1" (every waiting client tries again). A read release
-- deletes the acquisition's key; the hash then lives as long as the longest live read acquisition
-- (never less than a writer's TTL); when no reader is left alive and no writer holds it, the hash is
-- deleted and "0" published. A release that finds the lock gone publishes its message too
-- (Redisson does).
--
-- KEYS[1]  lock key (the hash)
-- KEYS[2]  the tag "{<key>}" of the read acquisitions' keys
-- KEYS[3]  the request's record: Redisson's unlock latch "redisson_unlock_latch:{<key>}:<request id>"
--          (any key of the lock's slot when ARGV[7] is 0)
-- ARGV[1]  owner id
-- ARGV[2]  "1": final release (the owner's side is freed whatever count Redis holds); "0": one
--          level (the count goes down by one, never below 1); an undo is a final release
-- ARGV[3]  write side: lease in milliseconds set by a partial release (0 keeps the TTL)
-- ARGV[4]  side: "r" read, "x" write
-- ARGV[5]  publish command: PUBLISH or SPUBLISH
-- ARGV[6]  the lock's channel "redisson_rwlock:{<key>}"
-- ARGV[7]  how long the record lives, in milliseconds (the waiter timeout); 0: keep no record (an
--          undo, which is safe to repeat as it is)
--
-- returns  0    the owner's hold on its side is released
--          1    partial release: one level less, the owner still holds its side
--          -1   the owner does not hold its side (lost, or an undone acquisition was never applied)
--
-- Safe to run twice, as compat_lock_release.lua: the first run that changes the lock records its
-- answer in KEYS[3], which answers a repeat; without the record a final release finds the owner gone
-- (ids are never reused) and a partial one never takes the last level. A key of another type, or a
-- hash that is no Redisson read/write lock, is refused with WRONGTYPE before any write.
local key, tag, record = KEYS[1], KEYS[2], KEYS[3]
local owner, final, leaseMs, side = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local publish, channel, recordMs = ARGV[5], ARGV[6], tonumber(ARGV[7])

if recordMs > 0 then
  local done = redis.call('GET', record)
  if done then
    return tonumber(done)
  end
end
local s = rr_load(key)
if s == false then
  return rr_wrong_type()
end
if s.mode == nil then
  redis.call(publish, channel, side == 'x' and 1 or 0)
  return -1
end
local res
if side == 'x' then
  if s.writer ~= owner then
    return -1
  end
  local field = owner .. ':write'
  if final == '1' then
    redis.call('HDEL', key, field)
    if s.nreaders == 0 then
      redis.call('DEL', key)
    else
      redis.call('HSET', key, 'mode', 'read')
    end
    redis.call(publish, channel, 1)
    res = 0
  else
    if s.wcount > 1 then
      redis.call('HINCRBY', key, field, -1)
    end
    if leaseMs > 0 then
      rr_expire(key, tag, {readers = s.readers}, leaseMs)
    end
    res = 1
  end
else
  local count = s.readers[owner]
  if not count then
    return -1
  end
  if final == '1' then
    for n = 1, count do
      redis.call('DEL', rr_timeout(tag, owner, n))
    end
    redis.call('HDEL', key, owner)
    s.readers[owner] = nil
    s.nreaders = s.nreaders - 1
    res = 0
  else
    if count > 1 then
      redis.call('DEL', rr_timeout(tag, owner, count))
      redis.call('HINCRBY', key, owner, -1)
      s.readers[owner] = count - 1
    end
    res = 1
  end
  local alive = rr_remain(s, tag) > 0
  if alive or s.writer then
    rr_expire(key, tag, s, 0)
  else
    redis.call('DEL', key)
    redis.call(publish, channel, 0)
  end
end
if recordMs > 0 then
  redis.call('SET', record, res, 'PX', recordMs)
end
return res
