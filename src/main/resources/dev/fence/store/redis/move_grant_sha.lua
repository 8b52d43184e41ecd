-- Moves the recorded grant sha of the current grant from an expected value to a new one
-- (see LeaseStore#moveGrantSha).
-- KEYS: meta, state
-- ARGV: holder, token, expected sha ('' for none), new sha ('' for none)
-- Returns {'ok' | 'refused', state as a flat field/value list}.
local m = current_meta(KEYS[1])
local s = read_hash(KEYS[2])
if not is_current_grant(s, ARGV[1], ARGV[2], m and m[1]) or (s.grantSha or '') ~= ARGV[3] then
  return {'refused', redis.call('HGETALL', KEYS[2])}
end
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[2], 'grantSha')
else
  redis.call('HSET', KEYS[2], 'grantSha', ARGV[4])
end
return {'ok', redis.call('HGETALL', KEYS[2])}
