-- Grants a resource unless a live lease stands in the way: another holder's, or the same holder's when
-- the own token (ARGV 12) does not let this grant replace it (see LeaseStore#acquire).
-- KEYS: meta, state, ledger, ledger seq, then the resource's ledger index and its repo's (if it has a repo)
-- ARGV: 1 holder, 2 ttl ms, 3 now ms ('' for the server's clock), 4 grant sha ('' for none),
--       5-7 candidate generation, key and a test clock's now (all '' for none: then a store without a
--       current identity answers {'no-identity'} and writes nothing), 8 retention asked for (see
--       store_retention),
--       9 resource, 10 repo (''), 11 ref (''),
--       12 the token of the holder's own live lease this grant may replace ('' for any, '0' for none)
-- Returns {'busy', holder, token, expiresAt}
--      or {'granted', generation, token, previous state as a flat field/value list, grantedAt}.
local meta_key, state_key, ledger_key, seq_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local index_keys = {KEYS[5], KEYS[6]}
local holder, ttl = ARGV[1], tonumber(ARGV[2])
local grant_sha = nonempty(ARGV[4])
local resource, repo, ref = ARGV[9], nonempty(ARGV[10]), nonempty(ARGV[11])
local own_token = ARGV[12]

local generation, floor
if ARGV[5] == '' then
  local m = current_meta(meta_key)
  if not m then
    return {'no-identity'}
  end
  generation, floor = m[1], m[2]
else
  generation, floor = ensure_meta(meta_key, ARGV[5], ARGV[6], ARGV[7])
end
local now = now_ms(ARGV[3])

local s, previous = read_hash(state_key)
-- A lease of an older generation is void: it neither blocks a grant nor lapses into an EXPIRE event.
local unreleased = s.holder ~= nil and s.released ~= '1' and s.gen == generation
if unreleased and now < tonumber(s.expiresAt)
    and (s.holder ~= holder or (own_token ~= '' and s.token ~= own_token)) then
  return {'busy', s.holder, s.token, s.expiresAt}
end
local min_id = store_retention(meta_key, ARGV[8])

if unreleased and tonumber(s.expiresAt) <= now then
  ledger_append(meta_key, ledger_key, seq_key, min_id,
    lease_event(s.expiresAt, 'EXPIRE', resource, repo, ref, s.holder, s.token), now, index_keys)
end

-- Above the counter, the floor and the grant's time in microseconds (StoreIdentity.nextToken): a state
-- the server lost without a new generation (an evicted key, an older snapshot loaded in place) restarts
-- behind, and the grant's time keeps its token above every token granted before.
local start = floor
if dec_lt(start, int(now * 1000)) then
  start = int(now * 1000)
end
if s.counter == nil or dec_lt(s.counter, start) then
  redis.call('HSET', state_key, 'counter', start)
end
local token = int(redis.call('HINCRBY', state_key, 'counter', 1))
redis.call('HSET', state_key, 'holder', holder, 'token', token, 'grantedAt', int(now),
  'expiresAt', int(now + ttl), 'released', '0', 'gen', generation)
if grant_sha then
  redis.call('HSET', state_key, 'grantSha', grant_sha)
else
  redis.call('HDEL', state_key, 'grantSha')
end
redis.call('HINCRBY', state_key, 'version', 1)

ledger_append(meta_key, ledger_key, seq_key, min_id,
  lease_event(int(now), 'GRANT', resource, repo, ref, holder, token), now, index_keys)
return {'granted', generation, token, previous, int(now)}
