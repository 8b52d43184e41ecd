package dev.fence.migrate;

import dev.fence.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;

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
}
