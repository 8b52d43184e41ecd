-- Reads one page of a ledger index (see index_event): the stream entries whose ids it lists, in seq order.
-- KEYS: 1 meta, 2 ledger, 3 the index (a resource's or a repo's)
-- ARGV: 1 'newest' (descending seq) or 'oldest' (ascending), 2 the seq to continue after ('' to start at the
--       end), 3 how many ids to read
-- Returns {'scan'} when the stream still holds events from before the store indexed its ledger (the caller
--         then reads the stream itself), else {ids read, the last seq read ('' for none), entry...}: the
--         entries still in the stream, each {id, fields}, in the order read.
local indexed_from = redis.call('HGET', KEYS[1], 'indexedFrom')
local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
if #first > 0 and (not indexed_from or entry_seq(first[1][2]) < tonumber(indexed_from)) then
  return {'scan'}
end
local count = tonumber(ARGV[3])
local ids
if ARGV[1] == 'newest' then
  local high = ARGV[2] == '' and '+inf' or '(' .. ARGV[2]
  ids = redis.call('ZREVRANGEBYSCORE', KEYS[3], high, '-inf', 'WITHSCORES', 'LIMIT', 0, count)
else
  local low = ARGV[2] == '' and '-inf' or '(' .. ARGV[2]
  ids = redis.call('ZRANGEBYSCORE', KEYS[3], low, '+inf', 'WITHSCORES', 'LIMIT', 0, count)
end
local out = {#ids / 2, ''}
for i = 1, #ids, 2 do
  out[2] = ids[i + 1]
  local entry = redis.call('XRANGE', KEYS[2], ids[i], ids[i])
  if #entry > 0 then
    out[#out + 1] = entry[1]
  end
end
return out
