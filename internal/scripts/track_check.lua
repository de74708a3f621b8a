-- track_check.lua: the answer of a renewal script's check mode (lease 0, the loss tracker's read:
-- internal/track), prepended to every renewal script. A held entry answers 1 + its time left.

-- track_left encodes the time left of a held entry, ms (a PTTL; < 0: it does not expire): 2 + ms,
-- or 1 if it does not expire.
local function track_left(ms)
  if ms >= 0 then
    return 2 + ms
  end
  return 1
end

