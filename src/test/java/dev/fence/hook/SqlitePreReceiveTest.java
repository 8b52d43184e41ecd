package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import dev.fence.testing.HookedRepo;
import dev.fence.testing.HookedRepo.Clone;
import dev.fence.testing.HookedRepo.Run;
import dev.fence.testing.ProcessTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
     * Git daemons and service managers often start hooks in {@code LANG=C} (this test's pushes run so),
     * where the JVM could not name a non-ASCII branch as a file: the installed hook switches to a UTF-8
     * locale, and a branch such as {@code café} is judged like any other.
     */
    @Test
    void aNonAsciiBranchIsJudgedInTheCLocale() {
        assertEquals("C", HookedRepo.gitEnv(tmp).get("LANG"));
        String cafe = "refs/heads/caf\u00e9";
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a", cafe);
        String tip = a.commit("work under the lease");
        Run r = a.push(opts(g), "HEAD:" + cafe);
        assertTrue(r.ok(), r.err());
        assertEquals(tip, repo.tip(cafe));

        Clone human = repo.clone("human");
        human.commit("unrelated history");
        assertFenced(human.push(List.of(), "+HEAD:" + cafe), "tokenless-overwrite");
        assertEquals(tip, repo.tip(cafe));
    }

    /**
     * A hook JVM that is started in {@code LANG=C} all the same (a launcher of its own) cannot name such a
     * branch: the push is refused whole, with a message that tells the operator what to change, not as an
     * internal error.
     */
    @Test
    void aHookJvmThatCannotNameTheBranchRefusesThePushAndSaysWhy() throws Exception {
        seeded("human");
        String tip = repo.tip(MAIN);
        ProcessBuilder pb = new ProcessBuilder(HookedRepo.launcher(tmp).toString(), "hook", "pre-receive")
                .directory(repo.bare().toFile());
        pb.environment().clear();
        pb.environment().putAll(HookedRepo.gitEnv(tmp));
        pb.environment().put("GIT_DIR", repo.bare().toString());
        pb.environment().put("LC_ALL", "C");
        pb.redirectErrorStream(true);
        Process p = pb.start();
        try (var in = p.getOutputStream()) {
            in.write(("0".repeat(40) + " " + tip + " refs/heads/caf\u00e9\n").getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(1, p.exitValue(), out);
        assertTrue(out.contains("REJECTED resource=- ref=- token=0 current=0 reason=bad-config"), out);
        assertTrue(out.contains("cannot name ref 'refs/heads/caf"), out);
        assertTrue(out.contains("UTF-8 locale"), out);
        assertFalse(out.contains("internal error"), out);
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
