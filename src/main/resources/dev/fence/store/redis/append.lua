-- Appends events to the ledger in one atomic step.
-- KEYS: meta, ledger, ledger seq
-- ARGV: retention asked for (see store_retention), now ms ('' for the server's clock: then it sets every event's time), not
--       after (see too_late), number of events, the events (see read_events; their index keys follow the three above)
-- Returns the number of events appended, or -1 when the call came too late (nothing appended).
guard()
local count = tonumber(ARGV[4])
local events, _, indexes = read_events(5, count)
-- Asked after parsing, just before the first write (see commit.lua).
if too_late(ARGV[3]) then
  return -1
end
local min_id = store_retention(KEYS[1], ARGV[1])
local now = nonempty(ARGV[2])
for e = 1, count do
  ledger_append(KEYS[1], KEYS[2], KEYS[3], min_id, events[e], now, indexes[e])
end
return count
