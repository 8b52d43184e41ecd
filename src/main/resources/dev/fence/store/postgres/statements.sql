-- Statements of the PostgreSQL store, loaded by name. Each starts with a "-- name: <name>" line and runs
-- to the next one; "{other.name}" includes another statement. Placeholders are positional; the Java side
-- binds them in the order written here.

-- The schema's version, and whether a function of functions.sql is missing (a store an older fence made).
-- name: schema.version
SELECT version, to_regproc('fence.append_1') IS NULL OR to_regproc('fence.commit_1') IS NULL AS functions_missing
  FROM fence.schema_info

-- Taken by the transaction that creates the schema, so that concurrent first users wait for it.
-- 1718510437 is "fnce".
-- name: schema.lock
SELECT pg_advisory_xact_lock(1718510437)

-- name: schema.exists
SELECT to_regnamespace('fence') IS NOT NULL

-- name: schema.create
CREATE SCHEMA fence

-- name: schema.tables
SELECT count(*)
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'fence' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')

-- The stored identity (all NULL when there is none) beside the live marker, whether the two match, and the
-- database's clock. The WAL file name starts with the timeline in 8 hex digits. pg_current_wal_lsn() fails
-- on a standby, which is right: fence writes only to a primary. The row's xmin is the 32-bit transaction id
-- of whoever wrote it last; written_xid is the full id of the transaction fence wrote it in: they differ once
-- anything else (a logical restore) has written the row.
-- name: identity.check
SELECT m.*,
       coalesce(m.system_identifier = m.live_system_identifier
                AND m.timeline = ('x' || m.live_timeline)::bit(32)::bigint
                AND (m.written_xid & 4294967295) = m.row_xid::bigint, false) AS matches
  FROM (SELECT i.generation, i.floor, i.proof_key, i.created_at,
               i.system_identifier, i.timeline, i.written_xid, i.version_base,
               i.xmin::text AS row_xid,
               s.system_identifier AS live_system_identifier,
               substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS live_timeline,
               floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS db_now
          FROM pg_control_system() s
          LEFT JOIN fence.identity i ON i.id = 1) m

-- name: identity.lock
SELECT id FROM fence.identity WHERE id = 1 FOR UPDATE

-- A first identity, or one for rows whose identity was lost: the floor is the database's clock in
-- microseconds (StoreIdentity.floorAt), raised above every token the rows hold.
-- name: identity.insert
INSERT INTO fence.identity (id, generation, floor, proof_key, created_at, system_identifier, timeline,
                            written_xid, version_base)
SELECT 1, ?, GREATEST(?, coalesce(max(GREATEST(latest_granted, highest_accepted)), 0)), ?, ?, ?, ?,
       txid_current(),
       CASE WHEN count(*) = 0 THEN 0 ELSE GREATEST(?, coalesce(max(GREATEST(latest_granted, highest_accepted)), 0)) END
  FROM fence.resources
ON CONFLICT (id) DO NOTHING

-- A new generation over data that may have been rolled back: the floor is the database's clock in
-- microseconds, raised above the old floor and to every token the rows hold; every version moves up by 2^32.
-- name: identity.replace
UPDATE fence.identity
   SET generation = ?,
       floor = GREATEST(?, floor + 1,
                        (SELECT coalesce(max(GREATEST(latest_granted, highest_accepted)), 0) FROM fence.resources)),
       proof_key = ?,
       created_at = ?,
       system_identifier = ?,
       timeline = ?,
       written_xid = txid_current(),
       version_base = version_base + 4294967296
 WHERE id = 1

-- name: resource.columns
resource, version, latest_granted, highest_accepted,
lease_generation, lease_holder, lease_token, lease_granted_at, lease_expires_at, lease_released, lease_grant_sha,
base_token, base_sha, last_token_write_sha,
tip_sha, tip_token, tip_holder, tip_pusher, tip_at

-- name: resource.lock
SELECT {resource.columns} FROM fence.resources WHERE resource = ? FOR UPDATE

-- Row locks are taken in name order, so that two commits naming the same resources cannot deadlock.
-- name: resources.lock
SELECT {resource.columns} FROM fence.resources WHERE resource = ANY (?) ORDER BY resource FOR UPDATE

-- A row for a resource seen for the first time, so that the next statement can lock it: DO NOTHING waits
-- for a concurrent insert of the same name, and never changes a row that exists.
-- name: resources.ensure
INSERT INTO fence.resources (resource, version, latest_granted, highest_accepted, base_token)
SELECT r, 0, 0, 0, 0 FROM unnest(?::text[]) AS r ORDER BY r COLLATE "C"
ON CONFLICT (resource) DO NOTHING

-- The identity check and a snapshot of resources in one statement, so in one consistent view.
-- name: snapshot.identified
WITH c AS ({identity.check})
SELECT c.*, r.*
  FROM c
  LEFT JOIN (SELECT {resource.columns} FROM fence.resources WHERE resource = ANY (?)) r ON true

-- name: resource.update
UPDATE fence.resources
   SET version = ?, latest_granted = ?, highest_accepted = ?,
       lease_generation = ?, lease_holder = ?, lease_token = ?, lease_granted_at = ?, lease_expires_at = ?,
       lease_released = ?, lease_grant_sha = ?,
       base_token = ?, base_sha = ?, last_token_write_sha = ?,
       tip_sha = ?, tip_token = ?, tip_holder = ?, tip_pusher = ?, tip_at = ?
 WHERE resource = ?

-- Commits, in one statement: the identity check, then fence.commit_1 (functions.sql) told whether it
-- matched. The number of commits, the writes' arrays (each write's commit first), then the events' arrays
-- (likewise), in the function's order; a row per commit, in order. c is evaluated once, before the
-- function: a query that calls volatile functions (clock_timestamp) is never folded into its parent.
-- name: commit.apply
WITH c AS ({identity.check})
SELECT c.*, f.*
  FROM c,
       LATERAL fence.commit_1(c.matches, c.generation, c.version_base, ?,
                              ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                              ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) f
 ORDER BY f.o_group

-- Events of no commit: none is left out.
-- name: events.append
SELECT fence.append_1(NULL, '{}', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)

-- Bounded, so that a long backlog (a store idle for months) drains over several writes instead of
-- stalling one of them; SKIP LOCKED, so that concurrent writers prune different rows instead of waiting
-- for each other.
-- name: event.prune
DELETE FROM fence.events
 WHERE seq IN (SELECT seq FROM fence.events WHERE at < ? ORDER BY at LIMIT ? FOR UPDATE SKIP LOCKED)

-- The query's filters are appended as "WHERE <column> = ? AND ...", then the ordering below; the
-- newest rows are taken first so that LIMIT keeps the newest, and the caller reverses them. LIMIT NULL
-- is no limit.
-- name: event.select
SELECT seq, at, type, resource, repo, ref, holder, pusher, token, old_sha, new_sha, reason, detail
  FROM fence.events

-- name: event.select.order
ORDER BY seq DESC LIMIT ?

-- The database's clock in epoch milliseconds: the store's time.
-- name: clock.now
SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint

-- The store's own settings (see schema.sql). The insert keeps a value another process wrote first.
-- name: setting.select
SELECT value FROM fence.settings WHERE name = ?

-- name: setting.insert
INSERT INTO fence.settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING

-- name: setting.upsert
INSERT INTO fence.settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value

-- Run by every new session of fence's: a commit acknowledged before the server's own disk has it
-- (off), or before any synchronous standby has it (local), could be a grant lost in a crash or failover.
-- A setting that waits longer (remote_write, remote_apply) is kept.
-- name: session.synchronous_commit
SELECT set_config('synchronous_commit', 'on', false)
 WHERE current_setting('synchronous_commit') IN ('off', 'local')

-- What a grant's durability depends on. synchronous_commit is read as the server's configuration, the
-- database and the role set it (reset_val), not as fence's session raised it; the names come quoted for
-- an ALTER ROLE ... IN DATABASE the operator may run.
-- name: settings.durability
SELECT s.reset_val AS synchronous_commit,
       current_setting('synchronous_commit') AS session_synchronous_commit,
       current_setting('synchronous_standby_names') AS synchronous_standby_names,
       quote_ident(current_user) AS role_name,
       quote_ident(current_database()) AS database_name
  FROM pg_settings s
 WHERE s.name = 'synchronous_commit'
