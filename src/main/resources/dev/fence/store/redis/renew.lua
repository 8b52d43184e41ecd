-- Extends the current grant of (holder, token) to now + ttl (see LeaseStore#renew); a grant that had
-- lapsed is recorded as an EXPIRE event dated at its lapse and a RENEW event dated now, so the ledger
-- shows the window it was open and that the grant holds again from the renewal on.
-- KEYS: meta, state, ledger, ledger seq, then the resource's ledger index and its repo's (if it has a repo)
-- ARGV: 1 holder, 2 token, 3 ttl ms, 4 now ms ('' for the server's clock), 5 retention asked for,
--       6 resource, 7 repo (''), 8 ref ('')
-- Returns {'ok' | 'refused', state as a flat field/value list}.
local state_key, ledger_key, seq_key = KEYS[2], KEYS[3], KEYS[4]
local m = current_meta(KEYS[1])
local s = read_hash(state_key)
if not is_current_grant(s, ARGV[1], ARGV[2], m and m[1]) then
  return {'refused', redis.call('HGETALL', state_key)}
end
local now = now_ms(ARGV[4])
local lapsed = tonumber(s.expiresAt) <= now
local retention = nil
if lapsed then
  -- Before the write: Redis keeps what a script wrote before an error (see commit.lua).
  retention = store_retention(KEYS[1], ARGV[5])
end
redis.call('HSET', state_key, 'expiresAt', int(now + tonumber(ARGV[3])))
if lapsed then
  local repo, ref = nonempty(ARGV[7]), nonempty(ARGV[8])
  ledger_append(KEYS[1], ledger_key, seq_key, retention,
    lease_event(s.expiresAt, 'EXPIRE', ARGV[6], repo, ref, s.holder, s.token), now, {KEYS[5], KEYS[6]})
  ledger_append(KEYS[1], ledger_key, seq_key, retention,
    lease_event(int(now), 'RENEW', ARGV[6], repo, ref, s.holder, s.token), now, {KEYS[5], KEYS[6]})
end
return {'ok', redis.call('HGETALL', state_key)}
