-- Reads the store identity and several resources' states in one atomic step: what a hook needs to
-- judge a push, in one round trip.
-- KEYS: 1 meta, 2.. the states
-- ARGV: 1 the generation the caller already knows ('' for none)
-- Refuses a server that may evict keys (an error reply, see guard).
-- Returns {'missing'} when there is no current identity (none, or one of another epoch of the server:
--         the caller starts a new generation and reads again);
--         else {'same', generation, state...} when the caller's generation is current (the key need not
--         cross the wire again) or {'full', generation, floor, key, createdAt, state...}, with one flat
--         field/value list per state key, in KEYS order (empty for an unknown resource); both end with the
--         server's clock in ms (what the caller bounds its next writes by, see too_late).
local m = current_meta(KEYS[1])
if not m then
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
out[#out + 1] = server_ms()
return out
