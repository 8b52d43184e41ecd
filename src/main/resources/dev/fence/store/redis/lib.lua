-- Helpers shared by every fence script. LuaScript prepends this file to each script, so a script
-- and its helpers are one EVALSHA body and run as one atomic step.
--
-- Conventions: every key comes from KEYS; numbers travel as canonical decimal strings (Redis' Lua
-- would print large numbers in exponent form, so they are formatted with %d); an empty ARGV string
-- stands for null where a value can never be empty (a sha, a repo id, a ref).

-- Entries past retention that one append deletes at most (see ledger_append).
local TRIM_BATCH = 256

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

-- The value of INFO's line 'label' (given with its colon): the match of the anchored pattern right after
-- the label at the start of a line, or nil. A plain find, not a pattern scan of the whole text: this runs
-- in every script, and INFO's three sections are kilobytes long.
local function info_field(info, label, pattern)
  local from = 1
  while true do
    local at = string.find(info, label, from, true)
    if not at then
      return nil
    end
    if at == 1 or string.byte(info, at - 1) == 10 then
      return string.match(info, pattern, at + #label)
    end
    from = at + 1
  end
end

-- What this server is, as no rollback can preserve it: its run id (new at every start, whatever the
-- persistence) and its replication id (new when a replica is promoted), with its eviction policy.
-- Read with INFO on every call, inside the same script as the grant or verdict it guards, so a restart,
-- a restore or a failover is seen by the very next call of every process, not by its first only.
-- An ACL that denies INFO leaves both unknown (nil): fence doctor names that set-up.
local function server_facts()
  local info = redis.pcall('INFO', 'server', 'replication', 'memory')
  if type(info) ~= 'string' then
    -- Servers before 7.0 take one section a call.
    local parts = {}
    for _, section in ipairs({'server', 'replication', 'memory'}) do
      local one = redis.pcall('INFO', section)
      if type(one) == 'string' then
        parts[#parts + 1] = one
      end
    end
    info = table.concat(parts, '\n')
  end
  local run = info_field(info, 'run_id:', '^%x+')
  local repl = info_field(info, 'master_replid:', '^%x+')
  local policy = info_field(info, 'maxmemory_policy:', '^[%w%-]+')
  local epoch = nil
  if run and repl then
    epoch = run .. ':' .. repl
  end
  return epoch, policy
end

-- Refuses, as an error reply, a server that may evict any key under memory pressure: an evicted state
-- hash would restart its counter at the floor and repeat tokens. Returns the server's epoch.
local function guard()
  local epoch, policy = server_facts()
  if policy and string.sub(string.lower(policy), 1, 8) == 'allkeys-' then
    error({err = 'FENCE-EVICTING ' .. policy})
  end
  return epoch
end

-- The identity record {generation, floor, key, createdAt} when it is current, else nil: absent (the
-- data was lost, or never existed) or written under another epoch of the server (it restarted, was
-- restored or was promoted since, and its data may have rolled back). Also returns the epoch.
local function current_meta(meta_key)
  local epoch = guard()
  local m = redis.call('HMGET', meta_key, 'generation', 'floor', 'key', 'createdAt', 'epoch')
  if not m[1] or (epoch and m[5] ~= epoch) then
    return nil, epoch
  end
  return m, epoch
end

-- The server's clock in epoch ms: the store's time, never a client's.
local function server_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- True when a write reaches the server after its caller stopped waiting (ARGV not_after: the server's
-- clock in ms past which the caller has timed out; '' for no bound). A server busy with a slow command
-- reads a request only when it is done, and runs it even if its client has gone: the caller has answered
-- as if the store were down by then, so the write must not happen behind its back.
local function too_late(not_after)
  return not_after ~= nil and not_after ~= '' and server_ms() > tonumber(not_after)
end

-- The time a script runs at, in epoch ms: the caller's test clock when it passes one (a non-empty
-- ARGV value), else the server's clock, which is what every production call uses.
local function now_ms(arg)
  if arg ~= nil and arg ~= '' then
    return tonumber(arg)
  end
  return server_ms()
end

-- The identity record, replaced by a new generation (the caller's candidate id and key) when it is not
-- current. The new floor is the server's clock, and never below the old floor: every token of the new
-- generation is above every token the old one issued (counters that survived count too, see acquire),
-- whatever the clock of the client that happened to call first.
local function ensure_meta(meta_key, generation, key, test_now)
  local m, epoch = current_meta(meta_key)
  if m then
    return m[1], m[2], false
  end
  local now = now_ms(test_now)
  -- In microseconds (StoreIdentity.floorAt): no resource is granted more than once a microsecond.
  local floor = now * 1000
  local old = redis.call('HMGET', meta_key, 'floor', 'retention', 'indexedFrom')
  if old[1] and tonumber(old[1]) >= floor then
    floor = tonumber(old[1]) + 1
  end
  redis.call('DEL', meta_key)
  redis.call('HSET', meta_key, 'generation', generation, 'floor', int(floor), 'key', key,
    'createdAt', int(now), 'epoch', epoch or '')
  -- A setting of the store outlives its generations, and so does the ledger with its indexes.
  if old[2] then
    redis.call('HSET', meta_key, 'retention', old[2])
  end
  if old[3] then
    redis.call('HSET', meta_key, 'indexedFrom', old[3])
  end
  return generation, int(floor), true
end

-- True when the lease recorded in state s is the current grant of (holder, token) in generation gen:
-- the counter is still that token and the lease is not released. Expiry does not matter here; a lease
-- of an older generation is void.
local function is_current_grant(s, holder, token, gen)
  return s.holder == holder and s.token == token and s.counter == token and s.released ~= '1'
    and gen ~= nil and s.gen == gen
end

-- The store's ledger retention in ms: a setting of the store (the identity record's 'retention'), the
-- same for every client, never whoever connects. The caller passes what it asks for: 'url:<ms>' when its
-- store URL names a retention, which must then equal the store's (else an error reply names the store's
-- value), or 'default:<ms>', taken only by a store that has no setting yet.
local function store_retention(meta_key, asked)
  local kind, ms = string.match(asked, '^(%a+):(%d+)$')
  local stored = redis.call('HGET', meta_key, 'retention')
  if stored then
    if kind == 'url' and ms ~= stored then
      error({err = 'FENCE-RETENTION ' .. stored})
    end
    return stored
  end
  if redis.call('EXISTS', meta_key) == 1 then
    redis.call('HSET', meta_key, 'retention', ms)
  end
  return ms
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

-- The seq field of a stream entry's field list, as a number.
local function entry_seq(fields)
  for i = 1, #fields, 2 do
    if fields[i] == 'seq' then
      return tonumber(fields[i + 1])
    end
  end
  return nil
end

-- Adds an appended event to its indexes (sorted sets of entry ids scored by seq: one per resource, one per
-- repo, whose keys the caller passes), and drops from them the ids that retention trimmed off the stream:
-- every id below the stream's first entry's seq. The index of a resource that gets no more events keeps
-- its trimmed ids (a few bytes each) until its next event; queries skip them. The first indexed append of
-- a store records its seq in the identity record ('indexedFrom'): events before it are in no index, and
-- queries scan the stream while any of them is left.
local function index_event(meta_key, ledger_key, index_keys, seq, id)
  if redis.call('HEXISTS', meta_key, 'indexedFrom') == 0 and redis.call('EXISTS', meta_key) == 1 then
    redis.call('HSET', meta_key, 'indexedFrom', int(seq))
  end
  local first = redis.call('XRANGE', ledger_key, '-', '+', 'COUNT', 1)
  local first_seq = #first > 0 and entry_seq(first[1][2]) or seq
  for _, key in ipairs(index_keys or {}) do
    redis.call('ZADD', key, int(seq), id)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. int(first_seq))
  end
end

-- Appends one event given as a flat field/value list (null fields left out) and trims the stream (a batch).
-- With a store clock (now nil), the event's time is the server's: its 'at' field is replaced, so no
-- client's clock places an event, or trims the ledger through retention. With a test clock (now given),
-- 'at' is kept. The entry id is that time or, if an earlier entry already has a later id, that id's
-- millisecond: ids stay increasing and an event's id is never below its time, so a 'since' query can
-- start reading at its own instant. Retention trims relative to that id, i.e. the store's time.
local function ledger_append(meta_key, ledger_key, seq_key, retention_ms, fields, now, index_keys)
  local seq = next_seq(ledger_key, seq_key)
  local at = 0
  for i = 1, #fields, 2 do
    if fields[i] == 'at' then
      if now == nil then
        fields[i + 1] = int(server_ms())
      end
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
  -- Retention drops at most TRIM_BATCH of the entries before min per append, oldest first, as the SQL
  -- stores prune: a backlog (a store idle for months, a retention just shortened) drains over several
  -- appends instead of stalling one of them, and every script that waits behind it, while it frees a
  -- million entries.
  local min = at - tonumber(retention_ms)
  if min > 0 then
    local old = redis.call('XRANGE', ledger_key, '-', int(min - 1), 'COUNT', TRIM_BATCH)
    if #old > 0 then
      local ids = {}
      for i = 1, #old do
        ids[i] = old[i][1]
      end
      redis.call('XDEL', ledger_key, unpack(ids))
    end
  end
  local args = {'XADD', ledger_key, int(at) .. '-*', 'seq', int(seq)}
  for i = 1, #fields do
    args[#args + 1] = fields[i]
  end
  local id = redis.call(unpack(args))
  index_event(meta_key, ledger_key, index_keys, seq, id)
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

-- Reads count events encoded as (n, field, value, ... n/2 pairs, k, k positions in KEYS of the event's
-- index keys) from ARGV starting at i.
-- Returns the events, their index keys and the index after them.
local function read_events(i, count)
  local events = {}
  local indexes = {}
  for e = 1, count do
    local n = tonumber(ARGV[i])
    local f = {}
    for j = 1, n do
      f[j] = ARGV[i + j]
    end
    events[e] = f
    i = i + n + 1
    local k = tonumber(ARGV[i])
    local keys = {}
    for j = 1, k do
      keys[j] = KEYS[tonumber(ARGV[i + j])]
    end
    indexes[e] = keys
    i = i + k + 1
  end
  return events, i, indexes
end
