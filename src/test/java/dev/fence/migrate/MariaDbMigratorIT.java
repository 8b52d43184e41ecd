package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.FencedWrites;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.core.Reason;
import dev.fence.migrate.Migrator.Outcome;
import dev.fence.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The migration contract on a real MariaDB (the machine's on 127.0.0.1:3306), each test in a database of its
 * own. DDL commits by itself there: a failing migration keeps the statements before the failing one.
 */
@Tag("process")
class MariaDbMigratorIT extends MigratorContractTest {
    private MariaDbServer server;
    private String database;
    private String decoy;
    private String odd;

    @Override
    List<String> refuseTokenUpdates() {
        return List.of("CREATE TRIGGER fence_refuses BEFORE UPDATE ON fence_tokens FOR EACH ROW"
                + " SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'bookkeeping refused by a trigger'");
    }

    @Override
    String newDatabase() {
        server = MariaDbServer.shared();
        database = server.createDatabase();
        return server.url(database);
    }

    @Override
    Connection connect() throws SQLException {
        return server.connect(database);
    }

    @Override
    boolean transactionalDdl() {
        return false;
    }

    @AfterEach
    void dropDatabase() {
        if (database != null) {
            server.dropDatabase(database);
        }
        if (decoy != null) {
            server.dropDatabase(decoy);
        }
        if (odd != null) {
            server.execute("", "DROP DATABASE IF EXISTS " + quoted(odd));
        }
    }

    /**
     * A fence_tokens table made by an earlier fence (resource a VARCHAR of the server's case-insensitive
     * collation) is turned into one that compares resource names byte for byte on first use, by runners
     * that may start together; the row it holds keeps fencing.
     */
    /**
     * MariaDB runs DDL outside the claim's transaction, and a prepared statement builds its text as it runs:
     * fence cannot roll such a change back, but it stops the run and records nothing.
     */
    @Test
    void fencesBookkeepingChangedByAPreparedStatementStopsTheRun() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        migration(
                "0043_sneaky.sql",
                "PREPARE sneaky FROM CONCAT('UPDATE fence', '_tokens SET token = 0');\nEXECUTE sneaky;\n");
        Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, apply(a, "0043"));
        assertTrue(f.message().contains("changed fence's own bookkeeping"), f.message());
        assertFalse(f.rolledBack());
        assertNull(appliedToken("0043"));
    }

    /**
     * A temporary table of fence's name shadows it for the session (fence's record then vanishes with it),
     * and a CHECK keeps the rows while freezing the fence row: both change what fence's tables are.
     */
    @Test
    void aShadowOrAConstraintOnFencesTablesStopsTheRun() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        String name = database;
        List<String> sneaky = List.of(
                "SET @s = CONCAT('CREATE TEMPORARY TABLE `" + name + "`.schema', '_migrations AS SELECT * FROM `" + name
                        + "`.schema', '_migrations');\nPREPARE p FROM @s;\nEXECUTE p;\nDEALLOCATE PREPARE p;\n",
                "PREPARE p FROM CONCAT('ALTER TABLE `" + name + "`.fence', '_tokens ADD CONSTRAINT frozen CHECK (token"
                        + " < 0 OR token >= 0)');\nEXECUTE p;\n");
        String version = "0043";
        for (String sql : sneaky) {
            migration(version + "_sneaky.sql", sql);
            Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, apply(a, version), sql);
            assertTrue(f.message().contains("changed fence's own bookkeeping"), f.message());
            assertNull(appliedToken(version), sql);
            java.nio.file.Files.delete(dir.resolve(version + "_sneaky.sql"));
            version = "0044";
        }
    }

    @Test
    void anOldCaseInsensitiveFenceTableIsUpgradedInPlace() throws Exception {
        Grant a = acquire("agent-A");
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE fence_tokens (resource VARCHAR(512) NOT NULL PRIMARY KEY, token BIGINT NOT NULL)"
                    + " ENGINE = InnoDB");
            s.execute("INSERT INTO fence_tokens (resource, token) VALUES ('" + RESOURCE + "', 0)");
        }
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Outcome> one = pool.submit(() -> apply(a, "0041"));
            Future<Outcome> two = pool.submit(() -> apply(a, "0041"));
            assertInstanceOf(Outcome.Done.class, one.get(60, TimeUnit.SECONDS));
            assertInstanceOf(Outcome.Done.class, two.get(60, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
        assertEquals(a.token(), appliedToken("0041"));
        assertEquals(a.token(), fenceRow());
        try (Connection c = connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA"
                        + " = DATABASE() AND TABLE_NAME = 'fence_tokens' AND COLUMN_NAME = 'resource'")) {
            assertTrue(rs.next());
            assertEquals("varbinary", rs.getString(1));
        }
        Grant upper =
                ((LeaseService.AcquireOutcome.Acquired) leases.acquire("DB/MIGRATIONS", "agent-B", TTL, null)).grant();
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> new Migrator(writes)
                .run(new Migrator.Request(
                        db,
                        dir,
                        "0042",
                        false,
                        "DB/MIGRATIONS",
                        upper.holder(),
                        upper.token(),
                        upper.proof(),
                        "migrations")));
        assertTrue(e.getMessage().contains("fenced by resource " + RESOURCE), e.getMessage());
        assertFalse(hasColumn("invoices", "currency"));
        assertEquals(a.token(), Migrator.status(db, dir, RESOURCE).fenceToken(), "status reads the row");
        assertInstanceOf(Outcome.Done.class, apply(a, "0042"));
    }

    /**
     * A database an agent prepared ahead of time (outside any migration) with tables of fence's names, the
     * decoy fence row at 0, as a migration's {@code USE} would find them.
     */
    private void createDecoyDatabase() {
        decoy = server.createDatabase();
        server.execute(
                decoy,
                "CREATE TABLE fence_tokens (resource VARBINARY(2048) NOT NULL PRIMARY KEY,"
                        + " token BIGINT NOT NULL) ENGINE = InnoDB");
        server.execute(decoy, "INSERT INTO fence_tokens (resource, token) VALUES ('" + RESOURCE + "', 0)");
        server.execute(
                decoy,
                "CREATE TABLE schema_migrations (version VARCHAR(64) NOT NULL PRIMARY KEY,"
                        + " applied_token BIGINT NULL, applied_holder VARCHAR(512) NULL) ENGINE = InnoDB");
    }

    private void assertDecoyUntouched() throws SQLException {
        String t = "`" + decoy + "`.";
        assertEquals(0, queryLong("SELECT token FROM " + t + "fence_tokens WHERE resource = '" + RESOURCE + "'"));
        assertEquals(1, queryLong("SELECT COUNT(*) FROM " + t + "fence_tokens"));
        assertEquals(0, queryLong("SELECT COUNT(*) FROM " + t + "schema_migrations"));
    }

    /**
     * A migration that switches the session's database with {@code USE}, followed by one that does not:
     * fence's claim and record still go to its own tables in the database it connected to, never to the
     * decoy's tables of the same names, and a token that went stale afterwards is still fenced.
     */
    @Test
    void aUseOfAnotherDatabaseDoesNotRedirectFencesBookkeeping() throws Exception {
        createDecoyDatabase();
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        migration("0043_switch.sql", "USE " + decoy + ";\nCREATE TABLE audit (id INTEGER);\n");
        migration("0044_after.sql", "CREATE TABLE `" + database + "`.after_use (id INTEGER);\n");
        Grant b = lapseAndAcquire("agent-B");
        Outcome.Done done = assertInstanceOf(Outcome.Done.class, apply(b, null));
        assertEquals(
                List.of("0043_switch.sql", "0044_after.sql"),
                done.applied().stream().map(Migrator.Applied::file).toList());
        assertEquals(b.token(), fenceRow());
        assertEquals(b.token(), appliedToken("0043"));
        assertEquals(b.token(), appliedToken("0044"));
        assertTrue(hasColumn("after_use", "id"));
        assertDecoyUntouched();
        // B pauses after the lease store admitted it; a successor applies a switching migration meanwhile.
        migration("0045_newer.sql", "USE " + decoy + ";\nCREATE TABLE newer (id INTEGER);\n");
        migration("0046_late.sql", "USE " + decoy + ";\nCREATE TABLE late (id INTEGER);\n");
        Grant[] c = new Grant[1];
        Migrator paused = new Migrator(writes, new Migrator.Seam() {
            @Override
            public void admitted(FencedWrites.Attempt attempt) {
                c[0] = lapseAndAcquire("agent-C");
                assertInstanceOf(Outcome.Done.class, apply(c[0], "0045"));
            }
        });
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, paused.run(request(b, "0046", false)));
        assertEquals(Reason.STALE_TOKEN, r.fenced().reason());
        assertEquals(c[0].token(), r.fenced().current());
        assertEquals(c[0].token(), fenceRow());
        assertEquals(c[0].token(), appliedToken("0045"));
        assertNull(appliedToken("0046"));
        assertFalse(hasColumn("`" + decoy + "`.late", "id"), "0046 did not run");
        assertDecoyUntouched();
    }

    /**
     * fence's tables live in the database the URL names, whatever it is called: its name is quoted, an
     * embedded backtick doubled.
     */
    @Test
    void fencesTablesLiveInTheDatabaseConnectedToWhateverItsName() throws Exception {
        odd = "fence_odd`" + database.substring("fence_test_".length());
        server.execute("", "CREATE DATABASE " + quoted(odd));
        db = DatabaseUrl.parse(server.url(odd), tmp);
        migration("0043_switch.sql", "USE " + database + ";\nCREATE TABLE elsewhere (id INTEGER);\n");
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        assertEquals(a.token(), queryLong("SELECT token FROM " + quoted(odd) + ".fence_tokens"));
        assertEquals(
                a.token(),
                queryLong("SELECT applied_token FROM " + quoted(odd) + ".schema_migrations WHERE version = '0043'"));
        assertTrue(hasColumn("elsewhere", "id"));
        assertFalse(hasColumn("fence_tokens", "token"));
        assertEquals(a.token(), Migrator.status(db, dir, RESOURCE).fenceToken());
    }

    private static String quoted(String name) {
        return "`" + name.replace("`", "``") + "`";
    }
}
