package dev.fence.hook;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

/** The hook end to end on a SQLite file. The store is "down" while another process holds its write lock. */
class SqlitePreReceiveTest extends PreReceiveEndToEndTest {
    private Connection locker;

    @Override
    String storeUrl() {
        return "sqlite:" + tmp.resolve("fence.db");
    }

    @Override
    void breakStore() throws Exception {
        Path db = tmp.resolve("fence.db");
        locker = DriverManager.getConnection("jdbc:sqlite:" + db);
        try (Statement s = locker.createStatement()) {
            s.execute("PRAGMA busy_timeout = 0");
            s.execute("BEGIN EXCLUSIVE");
        }
    }

    @Override
    void repairStore() throws Exception {
        if (locker != null) {
            try (Statement s = locker.createStatement()) {
                s.execute("ROLLBACK");
            }
            locker.close();
        }
    }
}
