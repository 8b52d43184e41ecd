-- Extends the current grant of (holder, token) to now + ttl (see LeaseStore#renew).
-- KEYS: state
-- ARGV: holder, token, ttl ms, now ms
-- Returns {'ok' | 'refused', state as a flat field/value list}.
local s = read_hash(KEYS[1])
if not is_current_grant(s, ARGV[1], ARGV[2]) then
  return {'refused', redis.call('HGETALL', KEYS[1])}
end
redis.call('HSET', KEYS[1], 'expiresAt', int(tonumber(ARGV[4]) + tonumber(ARGV[3])))
return {'ok', redis.call('HGETALL', KEYS[1])}
