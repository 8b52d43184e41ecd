package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.migrate.Migrator.Outcome;
import dev.fence.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
    }

    /**
     * A fence_tokens table made by an earlier fence (resource a VARCHAR of the server's case-insensitive
     * collation) is turned into one that compares resource names byte for byte on first use, by runners
     * that may start together; the row it holds keeps fencing.
     */
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
}
