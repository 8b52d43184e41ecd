-- Reads several resources' states in one atomic step.
-- KEYS: the states
-- Returns one flat field/value list per key, in KEYS order (empty for an unknown resource).
guard()
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('HGETALL', KEYS[i])
end
return out
