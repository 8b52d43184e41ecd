-- Applies compare-and-set writes to several resources and appends events, all or nothing
-- (see LeaseStore#commit).
-- KEYS: 1 meta, 2 ledger, 3 ledger seq, 4.. one state per write, then the events' index keys
-- ARGV: 1 retention asked for (see store_retention), 2 the generation the writes were decided under, 3 now ms ('' for the server's
--       clock), 4 number of writes, 5 not after (see too_late), then per write:
--         expected version, counter, highest, nSet, nSet field/value pairs, nDel, nDel fields
--       then the number of events and the events (see read_events).
-- Returns {'committed'}, {'conflict', write index} (1-based, nothing written; 0 when the generation is
--         no longer current: the caller reads again), {'late'} (nothing written: see too_late), or
--         {'lower', write index, field, stored value} (nothing written; a caller bug).
local ledger_key, seq_key = KEYS[2], KEYS[3]
local m = current_meta(KEYS[1])
if ARGV[2] ~= '' and (not m or m[1] ~= ARGV[2]) then
  return {'conflict', 0}
end
local now = nonempty(ARGV[3])
local write_count = tonumber(ARGV[4])
local writes = {}
local i = 6
for w = 1, write_count do
  local wr = {key = KEYS[3 + w], version = ARGV[i], counter = ARGV[i + 1], highest = ARGV[i + 2], set = {}, del = {}}
  i = i + 3
  local n = tonumber(ARGV[i])
  for j = 1, 2 * n do
    wr.set[j] = ARGV[i + j]
  end
  i = i + 2 * n + 1
  n = tonumber(ARGV[i])
  for j = 1, n do
    wr.del[j] = ARGV[i + j]
  end
  i = i + n + 1
  writes[w] = wr
end
local event_count = tonumber(ARGV[i])
local events, _, indexes = read_events(i + 1, event_count)

-- Check everything before writing anything.
for w = 1, write_count do
  local stored = redis.call('HMGET', writes[w].key, 'version', 'counter', 'highest')
  writes[w].stored = stored
  if (stored[1] or '0') ~= writes[w].version then
    return {'conflict', w}
  end
end
for w = 1, write_count do
  local stored = writes[w].stored
  if dec_lt(writes[w].counter, stored[2] or '0') then
    return {'lower', w, 'counter', stored[2]}
  end
  if dec_lt(writes[w].highest, stored[3] or '0') then
    return {'lower', w, 'highest', stored[3]}
  end
end
-- Redis keeps what a script wrote before an error: a URL refused for its retention is refused here, before
-- any write, or a state would change with no event in the ledger.
-- Asked after the checks, just before the first write (store_retention records a store's first retention):
-- the server's clock moves while a script runs, and a large commit's parsing and checks can take it past
-- the bound even when the script started within it.
if too_late(ARGV[5]) then
  return {'late'}
end
local min_id = nil
if event_count > 0 then
  min_id = store_retention(KEYS[1], ARGV[1])
end

for w = 1, write_count do
  local wr = writes[w]
  redis.call('HSET', wr.key, 'counter', wr.counter, 'highest', wr.highest)
  if #wr.set > 0 then
    redis.call('HSET', wr.key, unpack(wr.set))
  end
  if #wr.del > 0 then
    redis.call('HDEL', wr.key, unpack(wr.del))
  end
  redis.call('HINCRBY', wr.key, 'version', 1)
end
if event_count > 0 then
  for e = 1, event_count do
    ledger_append(KEYS[1], ledger_key, seq_key, min_id, events[e], now, indexes[e])
  end
end
return {'committed'}
