package dev.fence.migrate;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** The migration contract on a real SQLite file, the embedded default the demo uses. */
class SqliteMigratorTest extends MigratorContractTest {
    @Override
    String newDatabase() {
        return "sqlite:" + tmp.resolve("app.db");
    }

    @Override
    Connection connect() throws SQLException {
        return DriverManager.getConnection("jdbc:sqlite:" + tmp.resolve("app.db"));
    }
}
