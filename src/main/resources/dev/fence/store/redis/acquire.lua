-- Grants a resource unless another holder's lease is live (see LeaseStore#acquire).
-- KEYS: meta, state, ledger, ledger seq
-- ARGV: 1 holder, 2 ttl ms, 3 now ms, 4 grant sha ('' for none),
--       5-8 candidate generation, floor, key, createdAt (all '' for none: then a store without an
--       identity answers {'no-identity'} and writes nothing), 9 retention ms,
--       10 resource, 11 repo (''), 12 ref ('')
-- Returns {'busy', holder, token, expiresAt}
--      or {'granted', generation, token, previous state as a flat field/value list}.
local meta_key, state_key, ledger_key, seq_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local holder, ttl, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local grant_sha = nonempty(ARGV[4])
local resource, repo, ref = ARGV[10], nonempty(ARGV[11]), nonempty(ARGV[12])

local s, previous = read_hash(state_key)
local unreleased = s.holder ~= nil and s.released ~= '1'
if unreleased and now < tonumber(s.expiresAt) and s.holder ~= holder then
  return {'busy', s.holder, s.token, s.expiresAt}
end

local generation, floor
if ARGV[5] == '' then
  local m = redis.call('HMGET', meta_key, 'generation', 'floor')
  if not m[1] then
    return {'no-identity'}
  end
  generation, floor = m[1], m[2]
else
  generation, floor = ensure_meta(meta_key, ARGV[5], ARGV[6], ARGV[7], ARGV[8])
end
local min_id = retention_min_id(ARGV[9])

if unreleased and tonumber(s.expiresAt) <= now then
  ledger_append(ledger_key, seq_key, min_id,
    lease_event(s.expiresAt, 'EXPIRE', resource, repo, ref, s.holder, s.token))
end

if s.counter == nil or dec_lt(s.counter, floor) then
  redis.call('HSET', state_key, 'counter', floor)
end
local token = int(redis.call('HINCRBY', state_key, 'counter', 1))
redis.call('HSET', state_key,
  'holder', holder, 'token', token, 'grantedAt', int(now), 'expiresAt', int(now + ttl), 'released', '0')
if grant_sha then
  redis.call('HSET', state_key, 'grantSha', grant_sha)
else
  redis.call('HDEL', state_key, 'grantSha')
end
redis.call('HINCRBY', state_key, 'version', 1)

ledger_append(ledger_key, seq_key, min_id, lease_event(int(now), 'GRANT', resource, repo, ref, holder, token))
return {'granted', generation, token, previous}
