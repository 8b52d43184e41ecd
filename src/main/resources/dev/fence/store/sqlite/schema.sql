-- fence's SQLite store, schema version 2 (PRAGMA user_version; version 1 lacked the settings table).
-- Applied once, inside the BEGIN IMMEDIATE transaction that initialises a new file, so concurrent
-- processes opening a fresh file never see half a schema. Statements are separated by lines that end
-- with ';'. Instants are epoch milliseconds in the clock of the process that wrote them.

-- The store's identity. At most one row; it is replaced only by losing the whole file, which is what
-- makes a new generation.
CREATE TABLE meta (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    generation  TEXT    NOT NULL,
    floor       INTEGER NOT NULL,
    proof_key   BLOB    NOT NULL,
    created_at  INTEGER NOT NULL
);

-- One row per resource ever granted or written. Rows are never deleted: counters (latest_granted) and
-- highest_accepted must survive any ledger retention. lease_token IS NULL means "no lease" and
-- tip_token IS NULL means "no tip": both are Java primitives, so they are never null otherwise.
CREATE TABLE resources (
    resource              TEXT    NOT NULL PRIMARY KEY,
    version               INTEGER NOT NULL,
    latest_granted        INTEGER NOT NULL,
    highest_accepted      INTEGER NOT NULL,
    lease_holder          TEXT,
    lease_token           INTEGER,
    lease_granted_at      INTEGER,
    lease_expires_at      INTEGER,
    lease_released        INTEGER,
    lease_grant_sha       TEXT,
    base_token            INTEGER NOT NULL,
    base_sha              TEXT,
    last_token_write_sha  TEXT,
    tip_sha               TEXT,
    tip_token             INTEGER,
    tip_holder            TEXT,
    tip_pusher            TEXT,
    tip_at                INTEGER
);

-- The audit ledger. AUTOINCREMENT, because retention may delete every row and a sequence number must
-- never be handed out twice.
CREATE TABLE events (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    type      TEXT    NOT NULL,
    resource  TEXT    NOT NULL,
    repo      TEXT,
    ref       TEXT,
    holder    TEXT,
    pusher    TEXT,
    token     INTEGER NOT NULL,
    old_sha   TEXT,
    new_sha   TEXT,
    reason    TEXT,
    detail    TEXT
);

-- Each index also orders by seq (the rowid), which serves "newest first" scans per filter.
CREATE INDEX events_at ON events (at);
CREATE INDEX events_resource ON events (resource);
CREATE INDEX events_repo ON events (repo);
CREATE INDEX events_ref ON events (ref);
CREATE INDEX events_holder ON events (holder);

-- Settings of the store, the same for every client (the ledger retention: 'retention_ms').
CREATE TABLE settings (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- Stamps, read back on every open: the application id ("fnce") marks the file as fence's, the user
-- version is the schema version (SqliteLeaseStore.SCHEMA_VERSION).
PRAGMA application_id = 1718510437;
PRAGMA user_version = 2;
