-- fence migrate's own tables and statements on MariaDB and MySQL. Statements are named "-- name: <name>"
-- and read with dev.fence.store.SqlScripts.parseNamed. DDL commits by itself here: the claim is a
-- transaction of its own, made just before the migration, under a named lock (see Migrator).

-- A migration may change the session's database (USE other_db), and that holds for fence's statements after
-- it too. So fence's tables are named in ${schema}, the database DATABASE() named when fence connected
-- (Database.open puts it in, quoted). The lock functions are built in: a stored function of the same name
-- in any database is called only by its qualified name, so USE cannot put one in their place.

-- Where fence's tables live, read before any migration runs.
-- name: schema
SELECT DATABASE()

-- Resource names are compared byte for byte, as the lease store compares them: a VARCHAR would take the
-- server's default collation, case-insensitive (and PAD SPACE), under which a lease on DB/MIGRATIONS would
-- claim the fence row of db/migrations. VARBINARY holds the name's UTF-8 bytes (512 characters are at
-- most 1536 of them).
-- name: create_fence_table
CREATE TABLE IF NOT EXISTS ${schema}.`fence_tokens` (
    resource VARBINARY(2048) NOT NULL PRIMARY KEY,
    token    BIGINT NOT NULL
) ENGINE = InnoDB

-- A fence_tokens table made by an earlier fence (resource VARCHAR) made binary in place (see Migrator.prepare);
-- run again on a binary column it changes nothing, so runners that upgrade together are harmless. The
-- names' bytes are those of the old column's character set: an old latin1 table's non-ASCII names no
-- longer match their UTF-8 spelling, which is refused as another resource's row rather than matched.
-- name: binary_fence_table
ALTER TABLE ${schema}.`fence_tokens` MODIFY resource VARBINARY(2048) NOT NULL

-- name: create_migrations_table
CREATE TABLE IF NOT EXISTS ${schema}.`schema_migrations` (
    version VARCHAR(64) NOT NULL PRIMARY KEY
) ENGINE = InnoDB

-- name: add_applied_token
ALTER TABLE ${schema}.`schema_migrations` ADD COLUMN applied_token BIGINT NULL

-- name: add_applied_holder
ALTER TABLE ${schema}.`schema_migrations` ADD COLUMN applied_holder VARCHAR(512) NULL

-- name: seed_fence_row
INSERT IGNORE INTO ${schema}.`fence_tokens` (resource, token) VALUES (?, 0)

-- name: claim
UPDATE ${schema}.`fence_tokens` SET token = ? WHERE resource = ? AND token <= ?

-- The database is fenced by one resource: the rows of any other (see Migrator.prepare).
-- name: other_resources
SELECT resource FROM ${schema}.`fence_tokens` WHERE resource <> ? ORDER BY resource

-- A seeded row that never claimed, taken back when another resource fences the database.
-- name: unseed_fence_row
DELETE FROM ${schema}.`fence_tokens` WHERE resource = ? AND token = 0

-- name: fence_token
SELECT token FROM ${schema}.`fence_tokens` WHERE resource = ?

-- name: applied
SELECT version, applied_token, applied_holder FROM ${schema}.`schema_migrations`

-- A schema_migrations fence has not adopted yet (no applied_token, applied_holder): read by status.
-- name: applied_versions
SELECT version FROM ${schema}.`schema_migrations`

-- name: record_applied
INSERT INTO ${schema}.`schema_migrations` (version, applied_token, applied_holder) VALUES (?, ?, ?)

-- name: record_reapplied
UPDATE ${schema}.`schema_migrations` SET applied_token = ?, applied_holder = ? WHERE version = ?

-- Serialises fence migrate runners on one resource, since the claim cannot share the DDL's transaction.
-- name: lock
SELECT GET_LOCK(?, ?)

-- name: unlock
SELECT RELEASE_LOCK(?)

-- fence's bookkeeping as text rows, read right after the claim and again after a migration's statements
-- (Migrator.runStatements): a migration that changed it (through dynamic SQL, which the screen cannot read)
-- stops the run. Names and versions as hex: their columns' collations differ, and a UNION of text would
-- have to reconcile them. Another resource's row at 0 is left out (see postgresql.sql). The parameter is
-- the run's resource.
-- name: bookkeeping_rows
SELECT CONCAT_WS(' ', 'fence', HEX(resource), token) FROM ${schema}.`fence_tokens`
 WHERE token <> 0 OR resource = ?
UNION ALL
SELECT CONCAT_WS(' ', 'applied', HEX(version), IFNULL(applied_token, '-'), HEX(IFNULL(applied_holder, '-')))
  FROM ${schema}.`schema_migrations`

-- The triggers on fence's tables, which could rewrite a later claim. The parameter is the database's name.
-- Each table's own definition is read too (show_fence_tokens, show_schema_migrations below).
-- name: bookkeeping_objects
SELECT CONCAT_WS(' ', 'trigger', HEX(TRIGGER_NAME), HEX(EVENT_OBJECT_TABLE), HEX(ACTION_STATEMENT))
  FROM information_schema.TRIGGERS
 WHERE EVENT_OBJECT_SCHEMA = ? AND LOWER(EVENT_OBJECT_TABLE) IN ('fence_tokens', 'schema_migrations')

-- Each table's definition as the migration's connection sees it: columns, collations, constraints, indexes,
-- and a TEMPORARY table of the same name that would shadow it (read with the bookkeeping above).
-- name: show_fence_tokens
SHOW CREATE TABLE ${schema}.`fence_tokens`

-- name: show_schema_migrations
SHOW CREATE TABLE ${schema}.`schema_migrations`
