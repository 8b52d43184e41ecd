-- fence migrate's own tables and statements on SQLite. Statements are named "-- name: <name>" and read
-- with dev.fence.store.SqlScripts.parseNamed. DDL is transactional here: the claim runs in the
-- migration's own transaction (BEGIN IMMEDIATE, so it holds the write lock from its start), before its
-- first statement.

-- Resource names are compared byte for byte, as the lease store compares them: the column's collation is
-- SQLite's default, BINARY (never NOCASE).
-- name: create_fence_table
CREATE TABLE IF NOT EXISTS fence_tokens (
    resource VARCHAR(512) PRIMARY KEY,
    token    BIGINT NOT NULL
)

-- name: create_migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations (
    version VARCHAR(64) PRIMARY KEY
)

-- name: add_applied_token
ALTER TABLE schema_migrations ADD COLUMN applied_token BIGINT

-- name: add_applied_holder
ALTER TABLE schema_migrations ADD COLUMN applied_holder VARCHAR(512)

-- name: seed_fence_row
INSERT OR IGNORE INTO fence_tokens (resource, token) VALUES (?, 0)

-- The claim: zero rows means a newer token has written; the caller rolls back.
-- name: claim
UPDATE fence_tokens SET token = ? WHERE resource = ? AND token <= ?

-- The database is fenced by one resource: the rows of any other (see Migrator.prepare).
-- name: other_resources
SELECT resource FROM fence_tokens WHERE resource <> ? ORDER BY resource

-- A seeded row that never claimed, taken back when another resource fences the database.
-- name: unseed_fence_row
DELETE FROM fence_tokens WHERE resource = ? AND token = 0

-- name: fence_token
SELECT token FROM fence_tokens WHERE resource = ?

-- name: applied
SELECT version, applied_token, applied_holder FROM schema_migrations

-- A schema_migrations fence has not adopted yet (no applied_token, applied_holder): read by status.
-- name: applied_versions
SELECT version FROM schema_migrations

-- name: record_applied
INSERT INTO schema_migrations (version, applied_token, applied_holder) VALUES (?, ?, ?)

-- name: record_reapplied
UPDATE schema_migrations SET applied_token = ?, applied_holder = ? WHERE version = ?

-- fence's bookkeeping as text rows, read right after the claim and again after a migration's statements
-- (Migrator.runStatements): a migration that changed it is stopped and rolled back. Another resource's row
-- at 0 is left out (see postgresql.sql). The parameter is the run's resource.
-- name: bookkeeping_rows
SELECT 'fence ' || resource || ' ' || token FROM fence_tokens WHERE token <> 0 OR resource = ?
UNION ALL
SELECT 'applied ' || version || ' ' || IFNULL(applied_token, '-') || ' ' || IFNULL(applied_holder, '-')
  FROM schema_migrations

-- The schema's entries for fence's tables: their definitions, indexes and triggers.
-- name: bookkeeping_objects
SELECT 'object ' || type || ' ' || name || ' ' || IFNULL(sql, '') FROM sqlite_master
 WHERE lower(tbl_name) IN ('fence_tokens', 'schema_migrations')
