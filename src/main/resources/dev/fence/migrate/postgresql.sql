-- fence migrate's own tables and statements on PostgreSQL. Statements are named "-- name: <name>" and read
-- with dev.fence.store.SqlScripts.parseNamed. DDL is transactional here: the claim runs in the
-- migration's own transaction, before its first statement.

-- A migration may change the session's search_path (SET search_path, SET LOCAL, set_config, SET SCHEMA;
-- pg_dump's output empties it), and that holds for fence's statements after it too. So none of them leans
-- on the search_path: fence's tables are named in ${schema}, the schema current_schema() named when fence
-- connected (Database.open puts it in, quoted), and operators and the collation are pg_catalog's by name
-- (OPERATOR(pg_catalog.=) for =): a schema the migration put ahead of pg_catalog could hold an operator of
-- the same name and argument types, which PostgreSQL would choose (a <= that always holds would let a
-- stale token claim the fence row, and lower it). The column types are keywords, pg_catalog's whatever
-- the path.

-- Where fence's tables live, read before any migration runs: the schema of the fence_tokens the session's
-- search_path finds (a new session has no temporary tables), else the schema current_schema() names, where
-- they will be made; null when the search_path names no schema that exists, and then the search_path
-- itself, for the message. Found tables come first because current_schema() can move between runs without
-- anyone touching the search_path: under the default "$user", public, a migration that creates a schema
-- named after the role moves it, and the next run would start a new fence row at 0 and apply every
-- migration again.
-- name: schema
SELECT COALESCE(
         (SELECT n.nspname
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
           WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass('fence_tokens')),
         pg_catalog.current_schema()),
       pg_catalog.current_setting('search_path')

-- Resource names are compared byte for byte, as the lease store compares them. PostgreSQL's = is that
-- under any deterministic collation, and a database's default collation is one, so tables made by an
-- earlier fence need no change; COLLATE "C" says so whatever the database's default.
-- name: create_fence_table
CREATE TABLE IF NOT EXISTS ${schema}."fence_tokens" (
    resource VARCHAR(512) COLLATE pg_catalog."C" PRIMARY KEY,
    token    BIGINT NOT NULL
)

-- name: create_migrations_table
CREATE TABLE IF NOT EXISTS ${schema}."schema_migrations" (
    version VARCHAR(64) PRIMARY KEY
)

-- name: add_applied_token
ALTER TABLE ${schema}."schema_migrations" ADD COLUMN IF NOT EXISTS applied_token BIGINT

-- name: add_applied_holder
ALTER TABLE ${schema}."schema_migrations" ADD COLUMN IF NOT EXISTS applied_holder VARCHAR(512)

-- name: seed_fence_row
INSERT INTO ${schema}."fence_tokens" (resource, token) VALUES (?, 0) ON CONFLICT (resource) DO NOTHING

-- The claim: zero rows means a newer token has written; the caller rolls back. The row stays locked until
-- the transaction ends, so claims of one resource run one after another.
-- name: claim
UPDATE ${schema}."fence_tokens" SET token = ?
WHERE resource OPERATOR(pg_catalog.=) ? AND token OPERATOR(pg_catalog.<=) ?

-- The database is fenced by one resource: the rows of any other (see Migrator.prepare).
-- name: other_resources
SELECT resource FROM ${schema}."fence_tokens" WHERE resource OPERATOR(pg_catalog.<>) ? ORDER BY resource

-- A seeded row that never claimed, taken back when another resource fences the database.
-- name: unseed_fence_row
DELETE FROM ${schema}."fence_tokens"
WHERE resource OPERATOR(pg_catalog.=) ? AND token OPERATOR(pg_catalog.=) 0

-- name: fence_token
SELECT token FROM ${schema}."fence_tokens" WHERE resource OPERATOR(pg_catalog.=) ?

-- name: applied
SELECT version, applied_token, applied_holder FROM ${schema}."schema_migrations"

-- A schema_migrations fence has not adopted yet (no applied_token, applied_holder): read by status.
-- name: applied_versions
SELECT version FROM ${schema}."schema_migrations"

-- name: record_applied
INSERT INTO ${schema}."schema_migrations" (version, applied_token, applied_holder) VALUES (?, ?, ?)

-- name: record_reapplied
UPDATE ${schema}."schema_migrations" SET applied_token = ?, applied_holder = ?
WHERE version OPERATOR(pg_catalog.=) ?

-- Read after the claim and after each statement of a migration, in its transaction. The transaction's id:
-- another one means a statement ended the transaction that holds the claim (a COMMIT the driver split out
-- of a statement fence read as one), and what ran since ran unfenced. standard_conforming_strings: the
-- splitter and the screen read quotes as "on" has them, and the driver splits as the server says it is.
-- name: transaction_state
SELECT pg_catalog.txid_current(), pg_catalog.current_setting('standard_conforming_strings')

-- fence's bookkeeping as text rows, read right after the claim and again after a migration's statements
-- (Migrator.runStatements): a migration that changed it, through a name the screen could not read (dynamic
-- SQL), is stopped and rolled back. pg_catalog's concat, not ||, which a migration's schema could redefine.
-- Another resource's row at 0 is left out: a concurrent run of that resource seeds it and takes it back
-- (Migrator.prepare), and such a row fences nothing. The parameter is the run's resource.
-- name: bookkeeping_rows
SELECT pg_catalog.concat('fence ', resource, ' ', token) FROM ${schema}."fence_tokens"
 WHERE token OPERATOR(pg_catalog.<>) 0 OR resource OPERATOR(pg_catalog.=) ?
UNION ALL
SELECT pg_catalog.concat('applied ', version, ' ', applied_token, ' ', applied_holder) FROM ${schema}."schema_migrations"

-- The objects that make fence's tables what they are: each table (a table renamed away and replaced has
-- another oid), its row security, its columns (type, collation: a case-insensitive collation on resource
-- would let DB/MIGRATIONS claim db/migrations' row), defaults, constraints and indexes, and the triggers,
-- rules and policies on it, which could rewrite a later claim; and every role's and database's default
-- search_path (ALTER ROLE|DATABASE … SET search_path), which decides where the next run looks for fence's
-- tables: a migration that moved it would have the next run start a new fence row at 0. The two
-- parameters are the tables' qualified names.
-- name: bookkeeping_objects
WITH t(oid) AS (SELECT pg_catalog.to_regclass(?) UNION ALL SELECT pg_catalog.to_regclass(?))
SELECT pg_catalog.concat('table ', c.oid, ' ', c.relkind, ' ', c.relrowsecurity, ' ', c.relforcerowsecurity)
  FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t)
UNION ALL
SELECT pg_catalog.concat('column ', a.attrelid, ' ', a.attnum, ' ', a.attname, ' ', a.atttypid, ' ', a.atttypmod,
         ' ', a.attcollation, ' ', a.attnotnull, ' ', a.attisdropped, ' ', a.atthasdef)
  FROM pg_catalog.pg_attribute a
 WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t) AND a.attnum OPERATOR(pg_catalog.>) 0
UNION ALL
SELECT pg_catalog.concat('default ', d.oid, ' ', d.adrelid, ' ', d.adnum)
  FROM pg_catalog.pg_attrdef d WHERE d.adrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t)
UNION ALL
SELECT pg_catalog.concat('constraint ', k.oid, ' ', k.conrelid)
  FROM pg_catalog.pg_constraint k WHERE k.conrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t)
UNION ALL
SELECT pg_catalog.concat('index ', i.indexrelid, ' ', i.indrelid)
  FROM pg_catalog.pg_index i WHERE i.indrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t)
UNION ALL
SELECT pg_catalog.concat('trigger ', g.oid, ' ', g.tgrelid, ' ', g.tgenabled)
  FROM pg_catalog.pg_trigger g WHERE g.tgrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t)
UNION ALL
SELECT pg_catalog.concat('rule ', r.oid, ' ', r.ev_class)
  FROM pg_catalog.pg_rewrite r WHERE r.ev_class OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t)
UNION ALL
SELECT pg_catalog.concat('policy ', p.oid, ' ', p.polrelid)
  FROM pg_catalog.pg_policy p WHERE p.polrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM t)
UNION ALL
SELECT pg_catalog.concat('search_path ', s.setdatabase, ' ', s.setrole, ' ', c.cfg)
  FROM pg_catalog.pg_db_role_setting s, pg_catalog.unnest(s.setconfig) AS c(cfg)
 WHERE pg_catalog.starts_with(c.cfg, 'search_path=')

-- Fires now what a migration's deferred constraints and constraint triggers would fire at COMMIT, after
-- fence's check of its bookkeeping (Migrator.bookkeepingChanged), so that the check sees what they did.
-- name: fire_deferred
SET CONSTRAINTS ALL IMMEDIATE
