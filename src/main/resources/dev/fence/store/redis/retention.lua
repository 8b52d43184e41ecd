-- Reads, and when asked sets, the store's ledger retention (an admin's act; see store_retention). A change
-- appends the caller's RETENTION event, which names the value the caller saw: if the store holds another
-- by now, nothing is written and the caller retries with it, so the event always names the value it
-- replaced. The event is appended before anything is trimmed, and it is the newest entry, so the trim by
-- the new retention that follows it cannot take it.
-- KEYS: meta, ledger, ledger seq, then the ledger index of the event's resource
-- ARGV: 1 the new retention in ms ('' to only read it), 2 the retention asked for when none is set yet,
--       3 the setting the caller saw ('' for none), 4 'caller' to keep the event's time (a test clock),
--       '' to date it by the server's clock, 5... the event (see read_events)
-- Returns {'retention', ms}, {'changed', the setting now ('' for none)}, or {'no-identity'} when the store
-- has no identity record yet.
guard()
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'no-identity'}
end
if ARGV[1] ~= '' then
  local stored = redis.call('HGET', KEYS[1], 'retention') or ''
  if stored ~= ARGV[3] then
    return {'changed', stored}
  end
  redis.call('HSET', KEYS[1], 'retention', ARGV[1])
  local events, _, indexes = read_events(5, 1)
  ledger_append(KEYS[1], KEYS[2], KEYS[3], ARGV[1], events[1], nonempty(ARGV[4]), indexes[1])
  return {'retention', ARGV[1]}
end
return {'retention', store_retention(KEYS[1], ARGV[2])}
