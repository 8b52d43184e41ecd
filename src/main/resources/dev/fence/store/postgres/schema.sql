-- fence's PostgreSQL store, schema version 1 (fence.schema_info). Everything lives in the schema "fence",
-- which the store creates first if it is missing (PostgresLeaseStore).
-- Applied once, in one transaction under an advisory lock, so that concurrent processes opening a new
-- database never see half a schema. Statements are separated by lines that end with ';'. Instants are
-- epoch milliseconds: lease times in the clock of the process that wrote them, floors and creation times
-- in the database's own clock.

CREATE TABLE fence.schema_info (
    version  integer NOT NULL
);
INSERT INTO fence.schema_info (version) VALUES (1);

-- The store's identity: at most one row. Besides the generation it records a marker of the data's
-- history that a rollback cannot bring back with it: the cluster (pg_control_system()'s
-- system_identifier, new for every initdb or pg_upgrade), the WAL timeline (new on every promotion and
-- every point-in-time recovery), and the transaction that wrote the row (written_xid; a logical restore
-- writes the row anew, under another transaction id). When the marker no longer matches the live server,
-- the store replaces the row: a new generation.
-- version_base is added to every stored version, so that a new generation moves every resource's version
-- out of reach of snapshots taken before it, without rewriting the rows.
CREATE TABLE fence.identity (
    id                 smallint PRIMARY KEY CHECK (id = 1),
    generation         text     NOT NULL,
    floor              bigint   NOT NULL,
    proof_key          bytea    NOT NULL,
    created_at         bigint   NOT NULL,
    system_identifier  bigint   NOT NULL,
    timeline           bigint   NOT NULL,
    written_xid        bigint   NOT NULL,
    version_base       bigint   NOT NULL
);

-- One row per resource ever granted or written. Rows are never deleted: counters (latest_granted) and
-- highest_accepted must survive any ledger retention. lease_token IS NULL means "no lease", and a lease
-- whose lease_generation is not the current one is void; tip_token IS NULL means "no tip". Names compare
-- byte by byte (COLLATE "C"): "Case" and "case", or two spellings of "café", are different resources.
CREATE TABLE fence.resources (
    resource              text COLLATE "C" PRIMARY KEY,
    version               bigint  NOT NULL,
    latest_granted        bigint  NOT NULL,
    highest_accepted      bigint  NOT NULL,
    lease_generation      text,
    lease_holder          text,
    lease_token           bigint,
    lease_granted_at      bigint,
    lease_expires_at      bigint,
    lease_released        boolean,
    lease_grant_sha       text,
    base_token            bigint  NOT NULL,
    base_sha              text,
    last_token_write_sha  text,
    tip_sha               text,
    tip_token             bigint,
    tip_holder            text,
    tip_pusher            text,
    tip_at                bigint
);

-- The audit ledger. The identity column never hands out a number twice, even when retention has deleted
-- every row. detail is UTF-8 bytes, because a PostgreSQL text value cannot hold U+0000.
CREATE TABLE fence.events (
    seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        bigint NOT NULL,
    type      text   NOT NULL,
    resource  text COLLATE "C" NOT NULL,
    repo      text COLLATE "C",
    ref       text COLLATE "C",
    holder    text COLLATE "C",
    pusher    text,
    token     bigint NOT NULL,
    old_sha   text,
    new_sha   text,
    reason    text,
    detail    bytea
);

-- Settings of the store, the same for every client and kept across generations (the ledger retention:
-- 'retention_ms').
CREATE TABLE fence.settings (
    name   text PRIMARY KEY,
    value  text NOT NULL
);

-- Each filter index also orders by seq, which serves "newest first" scans per filter.
CREATE INDEX events_at ON fence.events (at);
CREATE INDEX events_resource ON fence.events (resource, seq);
CREATE INDEX events_repo ON fence.events (repo, seq);
CREATE INDEX events_ref ON fence.events (ref, seq);
CREATE INDEX events_holder ON fence.events (holder, seq);
