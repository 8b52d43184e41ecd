package dev.fence.hook;

import dev.fence.testing.PostgresServer;
import dev.fence.testing.ProcessTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The hook end to end on the PostgreSQL store: a database of this class's own on {@link
 * PostgresServer#shared()} (each test uses a repository id of its own, so they share the database).
 */
@ProcessTest
class PostgresPreReceiveTest extends PreReceiveEndToEndTest {
    private static PostgresServer server;
    private static String database;

    @BeforeAll
    static void createDatabase() {
        server = PostgresServer.shared();
        database = server.createDatabase();
    }

    @AfterAll
    static void dropDatabase() {
        if (database != null) {
            server.dropDatabase(database);
        }
    }

    @Override
    String storeUrl() {
        return server.url(database);
    }

    /** New sessions are refused at once, as by a server that is down. */
    @Override
    void breakStore() {
        server.execute("postgres", "ALTER DATABASE " + database + " WITH ALLOW_CONNECTIONS false");
        server.execute(
                "postgres",
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = '" + database + "'");
    }

    @Override
    void repairStore() {
        server.execute("postgres", "ALTER DATABASE " + database + " WITH ALLOW_CONNECTIONS true");
    }
}
