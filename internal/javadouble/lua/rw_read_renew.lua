-- rw_read_renew.lua: Redisson ReadLockTask renewal pass over one chunk of read locks (reference §2).
--
-- KEYS[2i-1]  the rwlock HASH of lock i (all KEYS in one slot on a Cluster)
-- KEYS[2i]    its key prefix {name}
-- ARGV[1]     lockWatchdogTimeout in ms
-- then, per lock i: the number c of this client's read-holding owners, followed by the c owners
--
-- returns  an array: 1 for each lock with a live local holder (its per-acquisition timeout keys and
--          the hash get the watchdog TTL), 0 for each lock without one
--
-- Safe to run twice: PEXPIRE to the same value.
local lease = ARGV[1]
local out = {}
local a = 2
for i = 1, #KEYS, 2 do
  local key, prefix = KEYS[i], KEYS[i + 1]
  local n = tonumber(ARGV[a])
  a = a + 1
  local alive = false
  for _ = 1, n do
    local owner = ARGV[a]
    a = a + 1
    local count = tonumber(redis.call('hget', key, owner))
    if count ~= nil then
      alive = true
      for k = 1, count do
        redis.call('pexpire', prefix .. ':' .. owner .. ':rwlock_timeout:' .. k, lease)
      end
    end
  end
  if alive then
    redis.call('pexpire', key, lease)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
