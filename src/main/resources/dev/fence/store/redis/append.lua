-- Appends events to the ledger in one atomic step.
-- KEYS: ledger, ledger seq
-- ARGV: retention ms, now ms ('' for the server's clock: then it sets every event's time), number of
--       events, the events (see read_events)
-- Returns the number of events appended.
guard()
local count = tonumber(ARGV[3])
local events = read_events(4, count)
local min_id = retention_min_id(ARGV[1])
local now = nonempty(ARGV[2])
for e = 1, count do
  ledger_append(KEYS[1], KEYS[2], min_id, events[e], now)
end
return count
