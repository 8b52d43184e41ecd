-- Releases the current grant of (holder, token) (see LeaseStore#release).
-- KEYS: meta, state, ledger, ledger seq, then the resource's ledger index and its repo's (if it has a repo)
-- ARGV: 1 holder, 2 token, 3 now ms ('' for the server's clock), 4 retention asked for, 5 resource,
--       6 repo (''), 7 ref ('')
-- Returns {'ok' | 'refused', state as a flat field/value list}.
local state_key, ledger_key, seq_key = KEYS[2], KEYS[3], KEYS[4]
local m = current_meta(KEYS[1])
local s = read_hash(state_key)
if not is_current_grant(s, ARGV[1], ARGV[2], m and m[1]) then
  return {'refused', redis.call('HGETALL', state_key)}
end
local now = now_ms(ARGV[3])
-- Before the write: Redis keeps what a script wrote before an error (see commit.lua).
local retention = store_retention(KEYS[1], ARGV[4])
redis.call('HSET', state_key, 'released', '1', 'expiresAt', int(now))
ledger_append(KEYS[1], ledger_key, seq_key, retention,
  lease_event(int(now), 'RELEASE', ARGV[5], nonempty(ARGV[6]), nonempty(ARGV[7]), ARGV[1], ARGV[2]), now,
  {KEYS[5], KEYS[6]})
return {'ok', redis.call('HGETALL', state_key)}
