-- Returns the store identity, starting a new generation from the candidate when there is no current
-- one (see ensure_meta).
-- KEYS: meta
-- ARGV: candidate generation, key (base64), a test clock's now ('' for the server's clock); the
--       generation the caller already knows ('' for none)
-- Returns {'same', generation, created} when the caller's generation is current (the key need not
-- cross the wire again), else {'full', generation, floor, key, createdAt, created}.
local _, _, created = ensure_meta(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
local m = redis.call('HMGET', KEYS[1], 'generation', 'floor', 'key', 'createdAt')
local flag = created and 1 or 0
if ARGV[4] ~= '' and m[1] == ARGV[4] then
  return {'same', m[1], flag}
end
return {'full', m[1], m[2], m[3], m[4], flag}
