-- Reads the store identity and several resources' states in one atomic step: what a hook needs to
-- judge a push, in one round trip.
-- KEYS: 1 meta, 2.. the states
-- ARGV: 1 the generation the caller already knows ('' for none), 2 '1' to check first that the server
--       may not evict keys (the caller's first call), else '0'
-- Returns {'evicting', policy} when the server may evict any key (nothing read);
--         {'missing'} when there is no identity (the caller creates one and reads again);
--         else {'same', generation, state...} when the caller's generation is current (the key need not
--         cross the wire again) or {'full', generation, floor, key, createdAt, state...}, with one flat
--         field/value list per state key, in KEYS order (empty for an unknown resource).
if ARGV[2] == '1' then
  -- An ACL that denies INFO gets the benefit of the doubt, as outside scripts.
  local info = redis.pcall('INFO', 'memory')
  if type(info) == 'string' then
    local policy = string.match(info, 'maxmemory_policy:([%w%-]+)')
    if policy and string.sub(string.lower(policy), 1, 8) == 'allkeys-' then
      return {'evicting', policy}
    end
  end
end
local m = redis.call('HMGET', KEYS[1], 'generation', 'floor', 'key', 'createdAt')
if not m[1] then
  return {'missing'}
end
local out
if ARGV[1] ~= '' and m[1] == ARGV[1] then
  out = {'same', m[1]}
else
  out = {'full', m[1], m[2], m[3], m[4]}
end
for i = 2, #KEYS do
  out[#out + 1] = redis.call('HGETALL', KEYS[i])
end
return out
