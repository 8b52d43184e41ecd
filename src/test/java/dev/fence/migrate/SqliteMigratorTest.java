package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import dev.fence.migrate.Migrator.Outcome;
import java.sql.Connection;
import java.sql.DriverManager;
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
}
