package dev.fence.migrate;

import dev.fence.testing.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;

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
}
