package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.FencedWrites;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.Reason;
import dev.fence.migrate.Migrator.Outcome;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code fence migrate} guarantees, against every database it supports: a real lease store (a SQLite
 * file), a real database of the test's own, the seed's migrations. Subclasses give the database.
 */
abstract class MigratorContractTest {
    static final String RESOURCE = "db/migrations";
    static final Duration TTL = Duration.ofMinutes(5);

    @TempDir
    Path tmp;

    FakeClock clock;
    LeaseStore store;
    LeaseService leases;
    FencedWrites writes;
    Path dir;
    DatabaseUrl db;

    /** A new, empty database of this test's own, as a {@code --db} URL. */
    abstract String newDatabase();

    /** A connection to the test's database; the caller closes it. */
    abstract Connection connect() throws SQLException;

    /** True when the database rolls DDL back with its transaction. */
    boolean transactionalDdl() {
        return true;
    }

    @BeforeEach
    void setUp() throws IOException {
        clock = new FakeClock(Instant.parse("2026-12-01T14:26:10Z"));
        store = Stores.open(
                "sqlite:" + tmp.resolve("store.db"), StoreOptions.defaults().withCallerClock());
        leases = new LeaseService(store, clock);
        writes = new FencedWrites(store, clock);
        dir = Files.createDirectories(tmp.resolve("migrations"));
        migration("0041_create_invoices.sql", "CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount INTEGER);\n");
        migration(
                "0042_add_invoice_currency.sql",
                "-- the seed's migration\nALTER TABLE invoices ADD COLUMN currency VARCHAR(3);\n");
        db = DatabaseUrl.parse(newDatabase(), tmp);
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    void migration(String name, String sql) throws IOException {
        Files.writeString(dir.resolve(name), sql);
    }

    Grant acquire(String holder) {
        var o = leases.acquire(RESOURCE, holder, TTL, null);
        return ((LeaseService.AcquireOutcome.Acquired) o).grant();
    }

    /**
     * SQL that makes every later update of {@code fence_tokens} fail with an error of the database's own,
     * as a trigger an operator added (or a privilege taken away) would.
     */
    abstract List<String> refuseTokenUpdates();

    /** A's lease lapses during its pause and B takes the resource: the seed's timeline. */
    Grant lapseAndAcquire(String holder) {
        clock.advance(TTL.plusSeconds(4));
        return acquire(holder);
    }

    Outcome apply(Grant g, String version) {
        return new Migrator(writes).run(request(g, version, false));
    }

    Outcome reapply(Grant g, String version) {
        return new Migrator(writes).run(request(g, version, true));
    }

    Migrator.Request request(Grant g, String version, boolean reapply) {
        return new Migrator.Request(
                db, dir, version, reapply, RESOURCE, g.holder(), g.token(), g.proof(), "migrations");
    }

    boolean hasColumn(String table, String column) throws SQLException {
        try (Connection c = connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT " + column + " FROM " + table + " WHERE 1 = 0")) {
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    long fenceRow() throws SQLException {
        return queryLong("SELECT token FROM fence_tokens WHERE resource = '" + RESOURCE + "'");
    }

    Long appliedToken(String version) throws SQLException {
        try (Connection c = connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT applied_token FROM schema_migrations WHERE version = '" + version + "'")) {
            return rs.next() ? rs.getLong(1) : null;
        }
    }

    long queryLong(String sql) throws SQLException {
        try (Connection c = connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            assertTrue(rs.next(), sql);
            return rs.getLong(1);
        }
    }

    List<LedgerEvent> ledger() {
        return store.query(new LedgerQuery(RESOURCE, null, null, null, null, null, 0));
    }

    /**
     * A bookkeeping statement the database refuses (a trigger, a privilege, a table of another shape) is not
     * a database that "cannot be reached": the operator is told that fence's own statement was refused,
     * and why (exit 6, not the store-down exit 5 that says "try again later"). Nothing is applied.
     */
    @Test
    void aRefusedBookkeepingStatementIsReportedAsRefusedNotAsUnreachable() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, "0041"));
        try (Connection c = connect();
                Statement st = c.createStatement()) {
            for (String sql : refuseTokenUpdates()) {
                st.execute(sql);
            }
        }
        dev.fence.core.ConfigException e = assertThrows(dev.fence.core.ConfigException.class, () -> apply(a, "0042"));
        assertTrue(e.getMessage().contains("refused fence's own statement"), e.getMessage());
        assertTrue(e.getMessage().contains("refused by a trigger"), e.getMessage());
        assertFalse(hasColumn("invoices", "currency"), "the migration did not run");
        assertNull(appliedToken("0042"));
    }

    @Test
    void appliesPendingMigrationsInOrderEachRecordingItsToken() throws SQLException {
        Grant a = acquire("agent-A");
        Outcome.Done done = assertInstanceOf(Outcome.Done.class, apply(a, null));
        assertEquals(
                List.of("0041_create_invoices.sql", "0042_add_invoice_currency.sql"),
                done.applied().stream().map(Migrator.Applied::file).toList());
        assertTrue(hasColumn("invoices", "currency"));
        assertEquals(a.token(), appliedToken("0042"));
        assertEquals(a.token(), fenceRow());
        assertTrue(ledger().stream()
                .anyMatch(e -> e.type() == EventType.LANDED && e.detail().contains("0042_add_invoice_currency.sql")));
        MigrationStatus s = Migrator.status(db, dir, RESOURCE);
        assertEquals(a.token(), s.fenceToken());
        assertTrue(s.pending().isEmpty());
        // Applied already: left alone.
        Outcome.Done again = assertInstanceOf(Outcome.Done.class, apply(a, "0042"));
        assertTrue(again.applied().isEmpty());
        assertEquals(1, again.skipped().size());
    }

    @Test
    void aStaleTokenIsFencedAndNothingIsApplied() throws SQLException {
        Grant a = acquire("agent-A");
        Grant b = lapseAndAcquire("agent-B");
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, apply(a, null));
        assertEquals(Reason.SUPERSEDED, r.fenced().reason());
        assertTrue(r.reread().startsWith("fence migrate status --db "), r.reread());
        // The command the agent is told to run names the directory as one shell word, whatever it is called.
        Outcome.Refused odd = assertInstanceOf(
                Outcome.Refused.class,
                new Migrator(writes)
                        .run(new Migrator.Request(
                                db, dir, null, false, RESOURCE, a.holder(), a.token(), a.proof(), "db migrations;id")));
        assertTrue(odd.reread().endsWith(" --dir 'db migrations;id'"), odd.reread());
        assertFalse(hasColumn("invoices", "id"), "no DDL ran");
        assertTrue(ledger().stream()
                .anyMatch(e -> e.type() == EventType.REJECT
                        && RESOURCE.equals(e.resource())
                        && e.token() == a.token()
                        && Reason.SUPERSEDED.code().equals(e.reason())));
        assertInstanceOf(Outcome.Done.class, apply(b, null));
    }

    /** The lease store's check passed, then a newer token wrote before the database was asked: its row fences. */
    @Test
    void theDatabaseFenceRowStopsATokenThatWentStaleAfterTheLeaseCheck() throws Exception {
        Grant a = acquire("agent-A");
        migration("0043_add_invoice_currency.sql", "ALTER TABLE invoices ADD COLUMN currency_code VARCHAR(3);\n");
        Grant[] b = new Grant[1];
        Migrator paused = new Migrator(writes, new Migrator.Seam() {
            @Override
            public void admitted(FencedWrites.Attempt attempt) {
                // A pauses here (a 429, a compaction); B takes the lease and applies 0041 and 0042.
                b[0] = lapseAndAcquire("agent-B");
                assertInstanceOf(Outcome.Done.class, apply(b[0], "0041"));
                assertInstanceOf(Outcome.Done.class, apply(b[0], "0042"));
            }
        });
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, paused.run(request(a, "0043", false)));
        assertEquals(Reason.STALE_TOKEN, r.fenced().reason());
        assertEquals(b[0].token(), r.fenced().current());
        assertFalse(hasColumn("invoices", "currency_code"), "0043's DDL did not run");
        assertNull(appliedToken("0043"));
        assertEquals(b[0].token(), fenceRow());
    }

    @Test
    void reapplyUnderAnotherTokenIsFenced() throws SQLException {
        Grant a = acquire("agent-A");
        Grant b = lapseAndAcquire("agent-B");
        assertInstanceOf(Outcome.Done.class, apply(b, null));
        // A's stale token: the seed's "migrate --reapply 0042".
        Outcome.Refused stale = assertInstanceOf(Outcome.Refused.class, reapply(a, "0042"));
        assertTrue(FenceReasons.isFencing(stale.fenced().reason()));
        // A current token of another holder, on a version B applied.
        leases.release(RESOURCE, b.holder(), b.token(), b.proof());
        Grant c = acquire("agent-C");
        Outcome.Refused foreign = assertInstanceOf(Outcome.Refused.class, reapply(c, "0042"));
        assertEquals(Reason.FOREIGN_OVERWRITE, foreign.fenced().reason());
        assertTrue(
                foreign.fenced().detail().contains("agent-B"), foreign.fenced().detail());
        assertEquals(b.token(), appliedToken("0042"));
        assertEquals(b.token(), fenceRow(), "the claim was rolled back");
    }

    @Test
    void reapplyUnderTheSameTokenRunsTheFileAgain() throws Exception {
        Grant a = acquire("agent-A");
        migration("0043_seed_rows.sql", "INSERT INTO invoices (id, amount) VALUES (1, 10);\n");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("DELETE FROM invoices");
        }
        Outcome.Done d = assertInstanceOf(Outcome.Done.class, reapply(a, "0043"));
        assertTrue(d.applied().get(0).reapplied());
        assertEquals(1, queryLong("SELECT COUNT(*) FROM invoices"));
    }

    @Test
    void renumberingUnderAStaleTokenIsFenced() throws Exception {
        Grant a = acquire("agent-A");
        Grant b = lapseAndAcquire("agent-B");
        assertInstanceOf(Outcome.Done.class, apply(b, null));
        // Blocked on 0042, A renumbers its migration to 0043.
        migration("0043_add_invoice_currency.sql", "ALTER TABLE invoices ADD COLUMN currency_iso VARCHAR(3);\n");
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, apply(a, "0043"));
        assertTrue(FenceReasons.isFencing(r.fenced().reason()));
        assertFalse(hasColumn("invoices", "currency_iso"));
        assertNull(appliedToken("0043"));
        assertEquals(1, Migrator.status(db, dir, RESOURCE).pending().size());
    }

    @Test
    void twoRacingAppliesOfOneVersionUnderTwoTokensApplyItOnce() throws Exception {
        Grant a = acquire("agent-A");
        CountDownLatch aAdmitted = new CountDownLatch(1);
        CyclicBarrier bothAdmitted = new CyclicBarrier(2);
        Migrator.Seam race = new Migrator.Seam() {
            @Override
            public void admitted(FencedWrites.Attempt attempt) {
                aAdmitted.countDown();
                try {
                    bothAdmitted.await(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        };
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Outcome> first = pool.submit(() -> new Migrator(writes, race).run(request(a, null, false)));
            assertTrue(aAdmitted.await(30, TimeUnit.SECONDS));
            Grant b = lapseAndAcquire("agent-B");
            Future<Outcome> second = pool.submit(() -> new Migrator(writes, race).run(request(b, null, false)));
            List<Outcome> outcomes =
                    new ArrayList<>(List.of(first.get(60, TimeUnit.SECONDS), second.get(60, TimeUnit.SECONDS)));
            long applied42 = outcomes.stream()
                    .flatMap(o -> o.applied().stream())
                    .filter(x -> x.file().startsWith("0042"))
                    .count();
            assertEquals(1, applied42, outcomes.toString());
            Long token = appliedToken("0042");
            assertTrue(token == a.token() || token == b.token());
            assertEquals(1, queryLong("SELECT COUNT(*) FROM schema_migrations WHERE version = '0042'"));
            assertTrue(hasColumn("invoices", "currency"));
            // Whoever lost was fenced by the database or found the version applied; never both applied.
            for (Outcome o : outcomes) {
                if (o instanceof Outcome.Refused r) {
                    assertEquals(Reason.STALE_TOKEN, r.fenced().reason());
                }
                assertFalse(o instanceof Outcome.Failed, o.toString());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFailingMigrationLeavesTheFenceRowAndTheSchemaAsTheyWere() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        Grant b = lapseAndAcquire("agent-B");
        migration(
                "0043_broken.sql",
                "-- adds a column, then fails\nALTER TABLE invoices ADD COLUMN paid_at VARCHAR(32);\n\n"
                        + "UPDATE no_such_table SET x = 1;\n");
        Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, apply(b, "0043"));
        assertEquals("0043_broken.sql", f.file());
        assertEquals(4, f.line());
        assertNull(appliedToken("0043"));
        if (transactionalDdl()) {
            assertTrue(f.rolledBack());
            assertFalse(hasColumn("invoices", "paid_at"), "the first statement rolled back");
            assertEquals(a.token(), fenceRow(), "the claim rolled back");
        } else {
            assertFalse(f.rolledBack());
        }
    }

    /**
     * The screen reads names as written; a migration can build one as it runs (PostgreSQL's {@code EXECUTE},
     * MariaDB's {@code PREPARE … FROM CONCAT(…)}). Whatever changed fence's bookkeeping on the migration's
     * connection (here the seam after its statement, standing in for such SQL) stops the run: nothing is
     * recorded, and where DDL is transactional everything rolls back, the claim included.
     */
    @Test
    void aMigrationThatChangesFencesBookkeepingByAnyNameIsStopped() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        List<List<String>> changes = new ArrayList<>();
        changes.add(List.of("UPDATE fence_tokens SET token = 0"));
        if (transactionalDdl()) {
            changes.add(List.of("UPDATE schema_migrations SET applied_holder = 'agent-Z'"));
            changes.add(refuseTokenUpdates());
        }
        int version = 43;
        for (List<String> change : changes) {
            Grant b = lapseAndAcquire("agent-B" + version);
            String v = String.format("%04d", version++);
            migration(v + "_note.sql", "ALTER TABLE invoices ADD COLUMN note" + v + " VARCHAR(10);\n");
            Migrator sneaky = new Migrator(writes, new Migrator.Seam() {
                @Override
                public void ran(SqlStatements.Statement statement, Connection connection) throws SQLException {
                    try (Statement st = connection.createStatement()) {
                        for (String sql : change) {
                            st.execute(sql);
                        }
                    }
                }
            });
            Outcome.Failed f =
                    assertInstanceOf(Outcome.Failed.class, sneaky.run(request(b, v, false)), change.toString());
            assertTrue(f.message().contains("changed fence's own bookkeeping"), f.message());
            assertNull(appliedToken(v), change.toString());
            if (transactionalDdl()) {
                assertTrue(f.rolledBack(), change.toString());
                assertFalse(hasColumn("invoices", "note" + v), "the migration rolled back");
                assertEquals(a.token(), fenceRow(), "the claim rolled back, and the change with it");
                assertEquals(
                        1,
                        queryLong("SELECT COUNT(*) FROM schema_migrations WHERE applied_holder = 'agent-A'"
                                + " AND version = '0041'"));
            }
        }
    }

    /**
     * Another resource's row at 0 is what a concurrent run of that resource seeds and takes back while this
     * one migrates (it fences nothing): its coming and going does not stop an honest migration.
     */
    @Test
    void anotherResourcesSeededRowDoesNotStopAMigration() throws Exception {
        Grant a = acquire("agent-A");
        migration("0043_note.sql", "ALTER TABLE invoices ADD COLUMN seeded VARCHAR(10);\n");
        Migrator seeding = new Migrator(writes, new Migrator.Seam() {
            @Override
            public void ran(SqlStatements.Statement statement, Connection connection) throws SQLException {
                if (statement.sql().contains("seeded")) {
                    try (Statement st = connection.createStatement()) {
                        st.execute("INSERT INTO fence_tokens (resource, token) VALUES ('db/other', 0)");
                    }
                }
            }
        });
        Outcome.Done done = assertInstanceOf(Outcome.Done.class, seeding.run(request(a, null, false)));
        assertEquals(3, done.applied().size(), done.toString());
        assertEquals(a.token(), appliedToken("0043"));
    }

    @Test
    void badInputNamesTheFileAndWritesNothing() throws Exception {
        Grant a = acquire("agent-A");
        InvalidInputException missing = assertThrows(InvalidInputException.class, () -> apply(a, "0099"));
        assertTrue(missing.getMessage().contains("0099"), missing.getMessage());
        InvalidInputException bad = assertThrows(InvalidInputException.class, () -> apply(a, "4x2"));
        assertTrue(bad.getMessage().contains("bad version"), bad.getMessage());
        migration("0043_open_quote.sql", "INSERT INTO invoices VALUES (1, 'oops);\n");
        InvalidInputException open = assertThrows(InvalidInputException.class, () -> apply(a, "0043"));
        assertTrue(
                open.getMessage().contains("0043_open_quote.sql")
                        && open.getMessage().contains("line 1"),
                open.getMessage());
        Files.delete(dir.resolve("0043_open_quote.sql"));
        migration("0043 oops.sql", "SELECT 1;\n");
        assertThrows(InvalidInputException.class, () -> apply(a, null));
        Files.delete(dir.resolve("0043 oops.sql"));
        assertFalse(hasColumn("invoices", "id"));
        assertFalse(hasColumn("schema_migrations", "version"), "nothing was created");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
    }

    /** A agent fenced on the database's resource takes a lease on another and tries again: refused. */
    @Test
    void aDatabaseIsFencedByOneResourceAndAnotherIsRefused() throws Exception {
        Grant a = acquire("agent-A");
        Grant b = lapseAndAcquire("agent-B");
        assertInstanceOf(Outcome.Done.class, apply(b, "0041"));
        assertInstanceOf(Outcome.Refused.class, apply(a, "0042"));
        Grant sneaky =
                ((LeaseService.AcquireOutcome.Acquired) leases.acquire("db/sneaky", "agent-A", TTL, null)).grant();
        Migrator.Request other = new Migrator.Request(
                db, dir, "0042", false, "db/sneaky", sneaky.holder(), sneaky.token(), sneaky.proof(), "migrations");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> new Migrator(writes).run(other));
        assertTrue(e.getMessage().contains("fenced by resource " + RESOURCE), e.getMessage());
        assertFalse(hasColumn("invoices", "currency"), "0042 did not run");
        assertEquals(0, queryLong("SELECT COUNT(*) FROM fence_tokens WHERE resource = 'db/sneaky'"));
        // Reapply under another resource whose token number is the same: refused as well.
        Grant evil = ((LeaseService.AcquireOutcome.Acquired) leases.acquire("db/evil", "evil", TTL, null)).grant();
        assertThrows(InvalidInputException.class, () -> new Migrator(writes)
                .run(new Migrator.Request(
                        db, dir, "0041", true, "db/evil", evil.holder(), evil.token(), evil.proof(), "migrations")));
        assertEquals(b.token(), appliedToken("0041"));
        assertInstanceOf(Outcome.Done.class, apply(b, "0042"));
    }

    /**
     * The re-read a FENCED message names ({@code fence migrate status}, no resource) shows the fence row
     * that is there, under the resource that fences the database, not the default resource's absent row at 0.
     */
    @Test
    void statusShowsTheResourceThatFencesTheDatabase() throws Exception {
        Grant other = ((LeaseService.AcquireOutcome.Acquired) leases.acquire("db/m3b", "agent-C", TTL, null)).grant();
        assertInstanceOf(
                Outcome.Done.class,
                new Migrator(writes)
                        .run(new Migrator.Request(
                                db,
                                dir,
                                "0041",
                                false,
                                "db/m3b",
                                other.holder(),
                                other.token(),
                                other.proof(),
                                "migrations")));
        for (String asked : java.util.Arrays.asList(null, RESOURCE)) {
            MigrationStatus s = Migrator.status(db, dir, asked);
            assertEquals("db/m3b", s.resource(), String.valueOf(asked));
            assertEquals(other.token(), s.fenceToken(), String.valueOf(asked));
        }
    }

    /**
     * Resource names are compared byte for byte on every database: {@code DB/MIGRATIONS} is another resource
     * than {@code db/migrations}, so an agent fenced on one cannot lease the other and migrate (a
     * case-insensitive collation would have matched the fence row of {@code db/migrations}).
     */
    @Test
    void aResourceDifferingOnlyInCaseIsAnotherResource() throws Exception {
        Grant b = acquire("agent-B");
        assertInstanceOf(Outcome.Done.class, apply(b, "0041"));
        Grant upper =
                ((LeaseService.AcquireOutcome.Acquired) leases.acquire("DB/MIGRATIONS", "agent-A", TTL, null)).grant();
        Migrator.Request other = new Migrator.Request(
                db, dir, "0042", false, "DB/MIGRATIONS", upper.holder(), upper.token(), upper.proof(), "migrations");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> new Migrator(writes).run(other));
        assertTrue(e.getMessage().contains("fenced by resource " + RESOURCE), e.getMessage());
        assertFalse(hasColumn("invoices", "currency"), "0042 did not run");
        assertEquals(1, queryLong("SELECT COUNT(*) FROM fence_tokens"), "no row of DB/MIGRATIONS stays");
        assertEquals(b.token(), fenceRow());
        assertInstanceOf(Outcome.Done.class, apply(b, "0042"));
    }

    /** The token number alone is not an identity: a version recorded under another holder is not yours. */
    @Test
    void reapplyNeedsTheHolderAsWellAsTheToken() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("UPDATE schema_migrations SET applied_holder = 'agent-Z' WHERE version = '0042'");
        }
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, reapply(a, "0042"));
        assertEquals(Reason.FOREIGN_OVERWRITE, r.fenced().reason());
        assertTrue(r.fenced().detail().contains("agent-Z"), r.fenced().detail());
    }

    /** A COMMIT in a file would end the transaction holding the claim: refused before anything runs. */
    @Test
    void transactionControlInAMigrationIsRefusedBeforeAnythingRuns() throws Exception {
        Grant a = acquire("agent-A");
        for (String control : List.of(
                "COMMIT",
                "commit and chain",
                "BEGIN",
                "END",
                "End Transaction",
                "ROLLBACK",
                "START TRANSACTION",
                "SAVEPOINT s1",
                "RELEASE s1",
                "ABORT",
                "/* sneaky */ prepare transaction 'p1'")) {
            migration(
                    "0043_control.sql",
                    "CREATE TABLE a (x INTEGER);\n-- end of part one\n  " + control
                            + ";\nCREATE TABLE b (x INTEGER);\nSELECT * FROM no_such_table;\n");
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null), control);
            assertTrue(
                    e.getMessage().contains("0043_control.sql")
                            && e.getMessage().contains("line 3")
                            && e.getMessage().contains("transaction control"),
                    e.getMessage());
            assertFalse(hasColumn("a", "x"), control);
            assertFalse(hasColumn("invoices", "id"), "nothing ran: " + control);
            assertFalse(hasColumn("fence_tokens", "token"), "not even the claim: " + control);
        }
        Files.delete(dir.resolve("0043_control.sql"));
        assertInstanceOf(Outcome.Done.class, apply(a, null));
    }

    /**
     * A migration that names fence's own tables or MariaDB's lock functions could lower the fence row,
     * re-tie the database to another resource, rewrite who applied what, or release the runners' lock:
     * refused before anything runs, like transaction control.
     */
    @Test
    void aMigrationNamingFencesOwnTablesOrLockIsRefusedBeforeAnythingRuns() throws Exception {
        Grant a = acquire("agent-A");
        for (String own : List.of(
                "UPDATE fence_tokens SET resource = 'db/sneaky', token = 0",
                "update public.FENCE_TOKENS set token = 0",
                "DELETE FROM \"schema_migrations\"",
                "UPDATE `schema_migrations` SET applied_token = NULL, applied_holder = NULL",
                "CREATE VIEW v AS SELECT * FROM fence_tokens",
                "SELECT RELEASE_LOCK('fence-migrate:db/migrations')",
                "SELECT release_all_locks()",
                "/* a comment */ SELECT get_lock('x', 1)")) {
            migration("0043_own.sql", "CREATE TABLE a (x INTEGER);\n-- housekeeping\n  " + own + ";\n");
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null), own);
            assertTrue(
                    e.getMessage().contains("0043_own.sql")
                            && e.getMessage().contains("line 3")
                            && e.getMessage().contains("fence migrate's own"),
                    e.getMessage());
            assertFalse(hasColumn("a", "x"), own);
            assertFalse(hasColumn("fence_tokens", "token"), "not even the claim: " + own);
        }
        // A name that only contains one of them is another name.
        migration("0043_own.sql", "CREATE TABLE my_fence_tokens_copy (x INTEGER);\n");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
    }

    @Test
    void aPlainSchemaMigrationsTableIsAdoptedAndFlywayIsRefused() throws Exception {
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE schema_migrations (version VARCHAR(255) NOT NULL PRIMARY KEY)");
            s.execute("INSERT INTO schema_migrations (version) VALUES ('41')");
            s.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount INTEGER)");
        }
        Grant a = acquire("agent-A");
        Outcome.Done d = assertInstanceOf(Outcome.Done.class, apply(a, null));
        assertEquals(
                List.of("0042_add_invoice_currency.sql"),
                d.applied().stream().map(Migrator.Applied::file).toList());
        MigrationStatus s = Migrator.status(db, dir, RESOURCE);
        assertNull(s.entries().get(0).appliedToken(), "41 was applied by the table's owner");
        try (Connection c = connect();
                Statement st = c.createStatement()) {
            // The owner's own inserts still work.
            st.execute("INSERT INTO schema_migrations (version) VALUES ('20240101000000')");
            st.execute("CREATE TABLE flyway_schema_history (installed_rank INTEGER PRIMARY KEY)");
        }
        migration("0043_more.sql", "ALTER TABLE invoices ADD COLUMN note VARCHAR(20);\n");
        InvalidInputException flyway = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(flyway.getMessage().contains("Flyway"), flyway.getMessage());
        assertFalse(hasColumn("invoices", "note"));
    }

    @Test
    void aNumericVersionColumnIsAdoptedAsNumbers() throws Exception {
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE schema_migrations (version BIGINT NOT NULL PRIMARY KEY)");
        }
        migration("0043_seed_rows.sql", "INSERT INTO invoices (id, amount) VALUES (7, 1);\n");
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        assertEquals(a.token(), queryLong("SELECT applied_token FROM schema_migrations WHERE version = 42"));
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("DELETE FROM invoices");
        }
        Outcome.Done again = assertInstanceOf(Outcome.Done.class, reapply(a, "43"));
        assertEquals(1, again.applied().size());
        assertTrue(Migrator.status(db, dir, RESOURCE).pending().isEmpty());
    }

    /** The reasons that mean "FENCED" (not REJECTED). */
    static final class FenceReasons {
        static boolean isFencing(Reason r) {
            return dev.fence.core.FencedMessage.isFencing(r);
        }
    }
}
