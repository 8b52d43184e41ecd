-- Appends events to the ledger in one atomic step.
-- KEYS: ledger, ledger seq
-- ARGV: retention ms, number of events, the events (see read_events)
-- Returns the number of events appended.
local count = tonumber(ARGV[2])
local events = read_events(3, count)
local min_id = retention_min_id(ARGV[1])
for e = 1, count do
  ledger_append(KEYS[1], KEYS[2], min_id, events[e])
end
return count
