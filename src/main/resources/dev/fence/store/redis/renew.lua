-- Extends the current grant of (holder, token) to now + ttl (see LeaseStore#renew).
-- KEYS: meta, state
-- ARGV: holder, token, ttl ms, now ms ('' for the server's clock)
-- Returns {'ok' | 'refused', state as a flat field/value list}.
local m = current_meta(KEYS[1])
local s = read_hash(KEYS[2])
if not is_current_grant(s, ARGV[1], ARGV[2], m and m[1]) then
  return {'refused', redis.call('HGETALL', KEYS[2])}
end
redis.call('HSET', KEYS[2], 'expiresAt', int(now_ms(ARGV[4]) + tonumber(ARGV[3])))
return {'ok', redis.call('HGETALL', KEYS[2])}
