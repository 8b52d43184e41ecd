package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import dev.fence.testing.HookedRepo.Clone;
import dev.fence.testing.HookedRepo.Run;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The hook end to end on a SQLite file. The store is "down" while another process holds its write lock. */
@ProcessTest
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

    /**
     * Every push starts a JVM, so what the hook's path loads is paid on every push: an admitted push on
     * SQLite loads none of the driver's JDBC layer (a few dozen lambdas, and regular expressions compiled
     * when its classes load) nor SLF4J. (That it links no lambda is {@code LauncherArchiveIT}'s to check.)
     */
    @Test
    void anAdmittedPushLoadsNoJdbcLayer() throws Exception {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a");
        String tip = a.commit("work under the lease");
        Path logs = Files.createDirectories(tmp.resolve("class-logs"));
        // One log per JVM (%p is its process id): git may run other hooks after this one.
        repo.hookJvmOptions("-Xlog:class+load=info:file=" + logs.resolve("classes-%p.log"));
        Run r = a.push(opts(g), "HEAD:" + MAIN);
        assertTrue(r.ok(), r.err());
        assertEquals(tip, repo.tip(MAIN));

        List<String> hooks = new ArrayList<>();
        try (Stream<Path> files = Files.list(logs)) {
            for (Path f : files.toList()) {
                String log = Files.readString(f);
                if (log.contains("dev.fence.hook.PreReceiveHook ")) {
                    hooks.add(log);
                }
            }
        }
        assertEquals(1, hooks.size(), "one pre-receive JVM");
        String classes = hooks.get(0);
        assertTrue(classes.contains("dev.fence.store.sqlite.SqliteDb "), "the log is a SQLite hook's");
        assertFalse(classes.contains("org.sqlite.jdbc3."), "the driver's JDBC layer was loaded");
        assertFalse(classes.contains("org.slf4j."), "SLF4J was started");
    }
}
