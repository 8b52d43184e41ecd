package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.testing.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The migration contract on a real PostgreSQL ({@link PostgresServer#shared()}: the machine's server on
 * 127.0.0.1:5432, else a private one), each test in a database of its own.
 */
@Tag("process")
class PostgresMigratorIT extends MigratorContractTest {
    private PostgresServer server;
    private String database;

    @Override
    String newDatabase() {
        server = PostgresServer.shared();
        database = server.createDatabase();
        return server.url(database);
    }

    @Override
    Connection connect() throws SQLException {
        return server.connect(database);
    }

    @AfterEach
    void dropDatabase() {
        if (database != null) {
            server.dropDatabase(database);
        }
    }

    /**
     * A COMMIT between two identifiers ending in {@code $a$} is a statement of its own to PostgreSQL and its
     * driver: refused as transaction control, before anything runs.
     */
    @Test
    void aCommitBetweenDollarEndedIdentifiersIsRefused() throws Exception {
        Grant a = acquire("agent-A");
        migration(
                "0043_sneaky.sql",
                "CREATE TABLE before_commit (x INTEGER);\n"
                        + "SELECT 1 AS x$a$; COMMIT; CREATE TABLE after_commit (y INTEGER); SELECT 2 AS y$a$;\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("COMMIT"), e.getMessage());
        assertFalse(hasColumn("before_commit", "x"));
        assertFalse(hasColumn("after_commit", "y"));
        assertFalse(hasColumn("fence_tokens", "token"), "not even the claim");
    }
}
