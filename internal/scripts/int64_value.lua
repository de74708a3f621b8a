-- int64_value.lua: the one decoder of an AtomicLong's value: a STRING holding a signed 64-bit integer
-- in the canonical decimal form Redis's INCRBY writes and reads ("0", "-7", no sign "+", no leading
-- zero), absent meaning 0. Lua numbers are doubles, so values are compared as strings, never converted.

local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'

-- int64_ok reports whether s is a canonical int64.
local function int64_ok(s)
  if s == '0' then
    return true
  end
  local neg, digits = string.match(s, '^(%-?)([1-9]%d*)$')
  if not digits or #digits > 19 then
    return false
  end
  if #digits < 19 then
    return true
  end
  if neg == '-' then
    return digits <= '9223372036854775808'
  end
  return digits <= '9223372036854775807'
end

-- int64_less reports whether canonical a < canonical b.
local function int64_less(a, b)
  local na, nb = string.sub(a, 1, 1) == '-', string.sub(b, 1, 1) == '-'
  if na ~= nb then
    return na
  end
  if #a ~= #b then
    return (#a < #b) ~= na
  end
  if na then
    return a > b
  end
  return a < b
end

-- int64_get returns the value at key ('0' if absent), or nil, after which the caller returns
-- WRONGTYPE: another type raises WRONGTYPE in GET itself; another string is not ours.
local function int64_get(key)
  local v = redis.call('GET', key)
  if not v then
    return '0'
  end
  if int64_ok(v) then
    return v
  end
  return nil
end
