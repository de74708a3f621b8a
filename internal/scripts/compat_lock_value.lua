-- compat_lock_value.lua: the one Lua decoder of Java Redisson's RLock format, used by a Client made
-- WithRedissonCompat. It is prepended to every compat_lock_*.lua script (see scripts.go); the Go side
-- has its own single decoder (decodeRedissonLock in lock.go).
--
-- The lock key (the object's name), absent when free, is a HASH with exactly one field while held:
--   <owner>  the holder's hold count, a positive integer (HINCRBY)
-- and a TTL, the holder's lease. A Java holder's owner is "<client UUID>:<thread id>", a Go holder's
-- "<client UUID>:<sequence>" of the same form (a random UUID, a decimal number; see newClientID in
-- client.go); the scripts only compare owners. Java Redisson's
-- RLock, RFairLock and RFencedLock all keep this hash at the name (the fair and fenced ones add keys
-- of their own beside it, which these scripts neither read nor write).
--
-- Unlike lock_value.lua's level ids, a count cannot tell a re-sent command from a new one: the
-- release scripts keep a record of a request (Redisson's unlock latch), and the counts are kept
-- safe rather than exact (see compat_lock_release.lua).

-- rl_load returns the holder's owner and count; nil if the key is absent (the lock is free); false if
-- the key is a hash that is not a Redisson lock (no field, several fields, a count that is not a
-- positive integer, an empty owner: a ReadWriteLock's hash, say). HLEN fails with WRONGTYPE on any
-- other type.
local function rl_load(key)
  local n = redis.call('HLEN', key)
  if n == 0 then
    return nil
  elseif n ~= 1 then
    return false
  end
  local flat = redis.call('HGETALL', key)
  if flat[1] == '' or not string.match(flat[2], '^[1-9]%d*$') then
    return false
  end
  return flat[1], tonumber(flat[2])
end

local function rl_wrong_type()
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

-- rl_recorded returns the answer a release's record (Redisson's unlock latch) keeps, if recordMs > 0
-- and the record exists; else nil.
local function rl_recorded(record, recordMs)
  if recordMs > 0 then
    local done = redis.call('GET', record)
    if done then
      return tonumber(done)
    end
  end
  return nil
end

-- rl_reenter adds one level to the hold owner has of key (it holds it), sets the TTL to leaseMs
-- (0 keeps it), and returns the owner's new count.
local function rl_reenter(key, owner, leaseMs)
  local count = redis.call('HINCRBY', key, owner, 1)
  if leaseMs > 0 then
    redis.call('PEXPIRE', key, leaseMs)
  end
  return count
end

-- rl_release releases owner's hold of count levels of the lock at key: with final the whole hold
-- (the key is deleted and freed() called: 0), else one level, never the last (the TTL set to
-- leaseMs if > 0: 1); the answer is recorded at record for recordMs (0: not recorded).
local function rl_release(key, owner, count, final, leaseMs, record, recordMs, freed)
  local res
  if final == '1' then
    redis.call('DEL', key)
    freed()
    res = 0
  else
    if count > 1 then
      redis.call('HINCRBY', key, owner, -1)
    end
    if leaseMs > 0 then
      redis.call('PEXPIRE', key, leaseMs)
    end
    res = 1
  end
  if recordMs > 0 then
    redis.call('SET', record, res, 'PX', recordMs)
  end
  return res
end
