-- Helpers shared by every fence script. LuaScript prepends this file to each script, so a script
-- and its helpers are one EVALSHA body and run as one atomic step.
--
-- Conventions: every key comes from KEYS; numbers travel as canonical decimal strings (Redis' Lua
-- would print large numbers in exponent form, so they are formatted with %d); an empty ARGV string
-- stands for null where a value can never be empty (a sha, a repo id, a ref).

local function int(n)
  return string.format('%d', n)
end

local function nonempty(v)
  if v == nil or v == '' then
    return nil
  end
  return v
end

-- a < b for canonical non-negative decimal strings, exact beyond 2^53.
local function dec_lt(a, b)
  if #a ~= #b then
    return #a < #b
  end
  return a < b
end

-- The hash at key as a table; absent fields are nil.
local function read_hash(key)
  local flat = redis.call('HGETALL', key)
  local h = {}
  for i = 1, #flat, 2 do
    h[flat[i]] = flat[i + 1]
  end
  return h, flat
end

-- The identity record, created from the caller's candidate when absent. A missing record means
-- the data was lost (or never existed): the candidate's floor (its creation time in ms) makes the
-- new generation's tokens larger than the lost one's, even if resource keys survived.
local function ensure_meta(meta_key, generation, floor, key, created_at)
  local m = redis.call('HMGET', meta_key, 'generation', 'floor')
  if m[1] then
    return m[1], m[2], false
  end
  redis.call('HSET', meta_key, 'generation', generation, 'floor', floor, 'key', key, 'createdAt', created_at)
  return generation, floor, true
end

-- True when the lease recorded in state s is the current grant of (holder, token): the counter is
-- still that token and the lease is not released. Expiry does not matter here.
local function is_current_grant(s, holder, token)
  return s.holder == holder and s.token == token and s.counter == token and s.released ~= '1'
end

-- The retention window in ms, passed through to ledger_append. Stream ids carry the recording
-- process's clock (see ledger_append), so retention is measured on that clock too, never Redis's.
local function retention_min_id(retention_ms)
  return retention_ms
end

-- The next ledger sequence number. The counter key is never trimmed; if it is missing while the
-- stream survived, it resumes from the newest entry so seq keeps increasing.
local function next_seq(ledger_key, seq_key)
  if redis.call('EXISTS', seq_key) == 0 then
    local last = redis.call('XREVRANGE', ledger_key, '+', '-', 'COUNT', 1)
    if #last > 0 then
      local fields = last[1][2]
      for i = 1, #fields, 2 do
        if fields[i] == 'seq' then
          redis.call('SET', seq_key, fields[i + 1])
        end
      end
    end
  end
  return redis.call('INCR', seq_key)
end

-- Appends one event given as a flat field/value list (null fields left out) and trims the stream.
-- The entry id is the event's own time ('at', the caller's clock) or, if an earlier entry already
-- has a later id (clock skew between processes), that id's millisecond: ids stay increasing and an
-- event's id is never below its time, so a 'since' query can start reading at its own instant.
local function ledger_append(ledger_key, seq_key, retention_ms, fields)
  local seq = next_seq(ledger_key, seq_key)
  local at = 0
  for i = 1, #fields, 2 do
    if fields[i] == 'at' then
      at = tonumber(fields[i + 1])
    end
  end
  local last = redis.call('XREVRANGE', ledger_key, '+', '-', 'COUNT', 1)
  if #last > 0 then
    local last_ms = tonumber(string.match(last[1][1], '^(%d+)'))
    if last_ms > at then
      at = last_ms
    end
  end
  local min = at - tonumber(retention_ms)
  if min < 0 then
    min = 0
  end
  local args = {'XADD', ledger_key, 'MINID', int(min), int(at) .. '-*', 'seq', int(seq)}
  for i = 1, #fields do
    args[#args + 1] = fields[i]
  end
  redis.call(unpack(args))
  return seq
end

-- A lease event (grant, expire, release) on a resource; repo and ref may be nil.
local function lease_event(at, event_type, resource, repo, ref, holder, token)
  local f = {'at', at, 'type', event_type, 'resource', resource}
  if repo then
    f[#f + 1] = 'repo'
    f[#f + 1] = repo
  end
  if ref then
    f[#f + 1] = 'ref'
    f[#f + 1] = ref
  end
  f[#f + 1] = 'holder'
  f[#f + 1] = holder
  f[#f + 1] = 'token'
  f[#f + 1] = token
  return f
end

-- Reads count events encoded as (n, field, value, ... n/2 pairs) from ARGV starting at i.
-- Returns the events and the index after them.
local function read_events(i, count)
  local events = {}
  for e = 1, count do
    local n = tonumber(ARGV[i])
    local f = {}
    for j = 1, n do
      f[j] = ARGV[i + j]
    end
    events[e] = f
    i = i + n + 1
  end
  return events, i
end
