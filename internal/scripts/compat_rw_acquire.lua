-- compat_rw_acquire.lua: acquire or re-enter a side of a ReadWriteLock in Java Redisson's
-- RReadWriteLock layout (a Client made WithRedissonCompat; format: compat_rw_value.lua), as
-- Redisson's acquisitions do. The write side takes a free lock (mode "write", "<owner>:write" 1,
-- TTL the lease); a re-entry adds a level and extends the TTL by the lease (PTTL + lease). The read
-- side takes a free lock or one in mode "read", or one in mode "write" whose writer vouches for the
-- caller (the downgrade: the writer's hold marks the caller's context); each read acquisition or
-- re-entry n adds one to the owner's count and writes its own "<tag>:<owner>:rwlock_timeout:<n>"
-- with the lease, and the hash's TTL becomes at least the lease. No read-to-write upgrade.
--
-- KEYS[1]  lock key (the hash)
-- KEYS[2]  the tag "{<key>}" of the read acquisitions' keys (the key itself if it has a {hash tag})
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds to set; 0 keeps the current TTL (re-entry of a fixed-lease hold:
--          a read re-entry's key then lives as long as the owner's longest)
-- ARGV[3]  mode: "f" or "w" a fresh acquisition (there is no queue: both make one attempt); "r"
--          re-entry
-- ARGV[4]  side: "r" read, "x" write
-- ARGV[5]  read side: the owner id of the writer that vouches for the caller, or ""
--
-- returns  {n, pttl}:
--          n ≥ 1  acquired: the owner's count on its side is now n
--          n = 0  not acquired: held by others, whose remaining TTL is pttl ms (-1: no expiry); or
--                 a re-entry by an owner that holds nothing (pttl 0)
--
-- Safe to run twice for a fresh acquisition: owner ids are never reused, so an owner found holding
-- its side is an earlier copy of this request's doing (answered as acquired without counting
-- again). A re-sent re-entry counts again, as compat_lock_acquire.lua's (the final release frees the
-- owner whatever its count). A key of another type, or a hash that is no Redisson read/write lock,
-- is refused with WRONGTYPE before any write.
local key, tag = KEYS[1], KEYS[2]
local owner, leaseMs, mode, side, vouch = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]

local s = rr_load(key)
if s == false then
  return rr_wrong_type()
end
if side == 'x' then
  local field = owner .. ':write'
  if mode == 'r' then
    if s.writer ~= owner then
      return {0, 0}
    end
    local n = redis.call('HINCRBY', key, field, 1)
    if leaseMs > 0 then
      redis.call('PEXPIRE', key, math.max(redis.call('PTTL', key), 0) + leaseMs)
    end
    return {n, 0}
  end
  if s.writer == owner then
    return {s.wcount, 0} -- a re-sent copy: the first one acquired
  end
  if s.mode == nil then
    redis.call('HSET', key, 'mode', 'write', field, 1)
    redis.call('PEXPIRE', key, leaseMs)
    return {1, 0}
  end
  return {0, redis.call('PTTL', key)}
end

local count = s.readers[owner]
if mode == 'r' then
  if not count then
    return {0, 0}
  end
  local px = leaseMs
  if px == 0 then
    for n = 1, count do
      px = math.max(px, redis.call('PTTL', rr_timeout(tag, owner, n)))
    end
    px = math.max(px, 1)
  end
  local n = redis.call('HINCRBY', key, owner, 1)
  redis.call('SET', rr_timeout(tag, owner, n), 1, 'PX', px)
  redis.call('PEXPIRE', key, math.max(redis.call('PTTL', key), px))
  return {n, 0}
end
if count then
  return {count, 0} -- a re-sent copy: the first one acquired
end
if s.mode == nil or s.mode == 'read' or (vouch ~= '' and s.writer == vouch) then
  if s.mode == nil then
    redis.call('HSET', key, 'mode', 'read')
  end
  redis.call('HSET', key, owner, 1)
  redis.call('SET', rr_timeout(tag, owner, 1), 1, 'PX', leaseMs)
  redis.call('PEXPIRE', key, math.max(redis.call('PTTL', key), leaseMs))
  return {1, 0}
end
return {0, redis.call('PTTL', key)}
