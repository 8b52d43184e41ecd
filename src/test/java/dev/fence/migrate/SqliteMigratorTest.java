package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.migrate.Migrator.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The migration contract on a real SQLite file, the embedded default the demo uses. */
class SqliteMigratorTest extends MigratorContractTest {
    @Override
    List<String> refuseTokenUpdates() {
        return List.of("CREATE TRIGGER fence_refuses BEFORE UPDATE ON fence_tokens"
                + " BEGIN SELECT RAISE(ABORT, 'bookkeeping refused by a trigger'); END");
    }

    @Override
    String newDatabase() {
        return "sqlite:" + tmp.resolve("app.db");
    }

    @Override
    Connection connect() throws SQLException {
        return DriverManager.getConnection("jdbc:sqlite:" + tmp.resolve("app.db"));
    }

    /**
     * SQLite itself ends the transaction (a trigger's RAISE(ROLLBACK)) before the statement fails: a failed
     * migration (exit 1, file and line), not "the database cannot be reached", and "rolled back" only when true.
     */
    @Test
    void aTransactionTheDatabaseEndedItselfIsAFailureNotAnOutage() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("CREATE TRIGGER no_rows BEFORE INSERT ON invoices BEGIN SELECT RAISE(ROLLBACK, 'no rows'); END");
        }
        Grant b = lapseAndAcquire("agent-B");
        migration(
                "0043_paid.sql",
                "ALTER TABLE invoices ADD COLUMN paid_at VARCHAR(32);\nINSERT INTO invoices (id, amount) VALUES (1, 1);\n");
        Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, apply(b, "0043"));
        assertEquals("0043_paid.sql", f.file());
        assertEquals(2, f.line());
        assertNull(appliedToken("0043"));
        if (f.rolledBack()) {
            assertFalse(hasColumn("invoices", "paid_at"));
            assertEquals(a.token(), fenceRow());
        } else {
            assertTrue(f.message().contains("fence migrate status"), f.message());
        }
    }

    /**
     * One database, one resource: a migration run under one resource cannot ATTACH another database file
     * (fenced by another resource) and change it, nor the lease store and copy its proof key. Refused by
     * name before anything runs, the fence row included.
     */
    @Test
    void anAttachedDatabaseIsRefusedBeforeAnythingRuns() throws Exception {
        Path other = tmp.resolve("other.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + other);
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
        }
        Grant a = acquire("agent-A");
        migration(
                "0043_sneaky.sql",
                "CREATE TABLE before_attach (x INTEGER);\n/* quietly */ attach database '" + other
                        + "' AS app;\nALTER TABLE app.invoices ADD COLUMN currency_code TEXT;\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(e.getMessage().contains("line 2: ATTACH"), e.getMessage());
        assertFalse(hasColumn("before_attach", "x"), "nothing ran");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + other);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM pragma_table_info('invoices')")) {
            assertTrue(rs.next());
            assertEquals(1, rs.getInt(1), "the other database's invoices is unchanged");
        }

        Files.delete(dir.resolve("0043_sneaky.sql"));
        migration("0043_detach.sql", "DETACH DATABASE app;\n");
        e = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(e.getMessage().contains("line 1: DETACH"), e.getMessage());
    }

    /**
     * Whatever the statement screen misses, fence's connection itself attaches no database: the lease
     * store's proof key stays out of a migration's reach.
     */
    @Test
    void theMigrationConnectionAttachesNoDatabase() throws Exception {
        try (Database d = Database.open(db);
                Statement s = d.connection().createStatement()) {
            SQLException e = assertThrows(
                    SQLException.class, () -> s.execute("ATTACH DATABASE '" + tmp.resolve("store.db") + "' AS store"));
            assertTrue(e.getMessage().contains("too many attached databases"), e.getMessage());
        }
    }
}
