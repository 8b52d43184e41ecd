-- Statements of the SQLite store, loaded by name. Each starts with a "-- name: <name>" line and runs
-- to the next one. Placeholders are positional; the Java side binds them in the order written here.

-- name: identity.select
SELECT generation, floor, proof_key, created_at FROM meta WHERE id = 1

-- name: identity.insert
INSERT OR IGNORE INTO meta (id, generation, floor, proof_key, created_at) VALUES (1, ?, ?, ?, ?)

-- name: resource.select
SELECT version, latest_granted, highest_accepted,
       lease_holder, lease_token, lease_granted_at, lease_expires_at, lease_released, lease_grant_sha,
       base_token, base_sha, last_token_write_sha,
       tip_sha, tip_token, tip_holder, tip_pusher, tip_at
  FROM resources
 WHERE resource = ?

-- name: resource.upsert
INSERT INTO resources (
       resource, version, latest_granted, highest_accepted,
       lease_holder, lease_token, lease_granted_at, lease_expires_at, lease_released, lease_grant_sha,
       base_token, base_sha, last_token_write_sha,
       tip_sha, tip_token, tip_holder, tip_pusher, tip_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (resource) DO UPDATE SET
       version = excluded.version,
       latest_granted = excluded.latest_granted,
       highest_accepted = excluded.highest_accepted,
       lease_holder = excluded.lease_holder,
       lease_token = excluded.lease_token,
       lease_granted_at = excluded.lease_granted_at,
       lease_expires_at = excluded.lease_expires_at,
       lease_released = excluded.lease_released,
       lease_grant_sha = excluded.lease_grant_sha,
       base_token = excluded.base_token,
       base_sha = excluded.base_sha,
       last_token_write_sha = excluded.last_token_write_sha,
       tip_sha = excluded.tip_sha,
       tip_token = excluded.tip_token,
       tip_holder = excluded.tip_holder,
       tip_pusher = excluded.tip_pusher,
       tip_at = excluded.tip_at

-- name: event.insert
INSERT INTO events (at, type, resource, repo, ref, holder, pusher, token, old_sha, new_sha, reason, detail)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)

-- Bounded, so that a long backlog (a store idle for months) drains over several writes instead of
-- stalling one of them while it holds the write lock.
-- name: event.prune
DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < ? ORDER BY at LIMIT ?)

-- The query's filters are appended as "WHERE <column> = ? AND ...", then the ordering below; the
-- newest rows are taken first so that LIMIT keeps the newest, and the caller reverses them.
-- name: event.select
SELECT seq, at, type, resource, repo, ref, holder, pusher, token, old_sha, new_sha, reason, detail
  FROM events

-- name: event.select.order
ORDER BY seq DESC LIMIT ?

-- name: schema.check
SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'

-- The store's own settings (see schema.sql).
-- name: setting.select
SELECT value FROM settings WHERE name = ?

-- name: setting.upsert
INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value

-- Version 1 to 2: the settings table.
-- name: schema.upgrade.2
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)

-- The database engine's clock in epoch milliseconds: the store's time for retention.
-- name: clock.now
SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)
