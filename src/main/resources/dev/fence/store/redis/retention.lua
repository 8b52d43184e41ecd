-- Reads, and when asked sets, the store's ledger retention (an admin's act; see store_retention).
-- KEYS: meta
-- ARGV: the new retention in ms ('' to only read it), the retention asked for when none is set yet
-- Returns {'retention', ms} or {'no-identity'} when the store has no identity record yet.
guard()
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'no-identity'}
end
if ARGV[1] ~= '' then
  redis.call('HSET', KEYS[1], 'retention', ARGV[1])
  return {'retention', ARGV[1]}
end
return {'retention', store_retention(KEYS[1], ARGV[2])}
