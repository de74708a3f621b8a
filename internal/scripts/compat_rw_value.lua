-- compat_rw_value.lua: the one Lua decoder of Java Redisson's RReadWriteLock layout, used by a
-- Client made WithRedissonCompat. It is prepended to every compat_rw_*.lua script (see scripts.go);
-- the Go side has its own single decoder (decodeRedissonRW in rwlock.go).
--
-- The lock key (the object's name), absent when free, is a HASH:
--   mode            "read" or "write"
--   <owner>         a reader's hold count, a positive integer
--   <owner>:write   the writer's hold count (in mode "write" only, exactly one)
-- and a TTL: the longest lease of its holders. Each read acquisition n (1..count) of an owner has a
-- STRING "{<name>}:<owner>:rwlock_timeout:<n>" ("<name>:..." when the name has a {hash tag}) whose
-- TTL is that acquisition's lease; a reader whose keys have all expired no longer counts. A Java
-- owner is "<client UUID>:<thread id>", a Go owner "<client UUID>:<sequence>" of the same form (a
-- decimal number after the last colon: never one ending in ":write"); a writer may also read (mode
-- "write" with reader fields): Redisson's downgrade.
-- Releases publish on "redisson_rwlock:{<name>}": "0" a read release, "1" a write release.

-- rr_load returns the decoded hash: {mode = nil|'read'|'write', writer = owner or nil, wcount,
-- readers = {owner -> count}, nreaders}; a free lock has mode nil. It returns false for a hash that
-- is no Redisson read/write lock (an RLock's hash, application data). HGETALL fails with WRONGTYPE
-- on any other type.
local function rr_load(key)
  local flat = redis.call('HGETALL', key)
  local s = {readers = {}, nreaders = 0, wcount = 0}
  if #flat == 0 then
    return s
  end
  for i = 1, #flat, 2 do
    local f, v = flat[i], flat[i + 1]
    if f == 'mode' then
      if v ~= 'read' and v ~= 'write' then
        return false
      end
      s.mode = v
    elseif f == '' or not string.match(v, '^[1-9]%d*$') then
      return false
    elseif string.sub(f, -6) == ':write' then
      if s.writer or #f == 6 then
        return false
      end
      s.writer, s.wcount = string.sub(f, 1, -7), tonumber(v)
    else
      s.readers[f] = tonumber(v)
      s.nreaders = s.nreaders + 1
    end
  end
  if s.mode == nil or (s.mode == 'write') ~= (s.writer ~= nil) then
    return false
  end
  return s
end

-- rr_timeout is the key of read acquisition n of owner; tag is "{<name>}" (or the name itself when
-- it has a hash tag).
local function rr_timeout(tag, owner, n)
  return tag .. ':' .. owner .. ':rwlock_timeout:' .. n
end

-- rr_remain is the longest remaining TTL of the readers' acquisitions (ms; ≤ 0 if none is alive).
local function rr_remain(s, tag)
  local most = -2
  for owner, count in pairs(s.readers) do
    for n = count, 1, -1 do
      most = math.max(most, redis.call('PTTL', rr_timeout(tag, owner, n)))
    end
  end
  return most
end

-- rr_expire sets the hash's TTL to ms, but never below a live reader's acquisition, nor below the
-- TTL it has while a writer holds it (the writer's lease is in it): a holder's lease is never cut.
local function rr_expire(key, tag, s, ms)
  ms = math.max(ms, rr_remain(s, tag))
  if s.writer then
    ms = math.max(ms, redis.call('PTTL', key))
  end
  if ms > 0 then
    redis.call('PEXPIRE', key, ms)
  end
end

local function rr_wrong_type()
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
