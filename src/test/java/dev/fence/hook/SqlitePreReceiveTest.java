package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import java.util.Map;
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
        assertRefusedAsUnnameable(hookJvm(Map.of("LC_ALL", "C"), "0".repeat(40) + " " + repo.tip(MAIN)));
    }

    /**
     * A Latin-1 locale can encode {@code é}, as other bytes than git's: in one, the file of a symbolic ref
     * {@code refs/heads/café} would not be found, and a push to it (which git applies to {@code main}) would
     * be judged as a push to a plain branch. A pusher on a local-path remote chooses the hook's environment,
     * and glibc reads {@code x.ISO-8859-1@a.UTF-8} as Latin-1 (the rest is a modifier), from its own {@code
     * LOCPATH}: the installed hook starts the JVM in UTF-8 all the same, and a JVM started in that locale
     * refuses the push.
     */
    @Test
    void aPushersLatin1LocaleCannotHideASymbolicRef() throws Exception {
        Path locales = tmp.resolve("locales");
        assumeTrue(latin1Locale(locales), "localedef or en_US's locale source is not installed");
        Map<String, String> latin1 = Map.of("LOCPATH", locales.toString(), "LC_ALL", "x.ISO-8859-1@a.UTF-8");
        Clone m = seeded("mallory");
        acquire("agent-a");
        String tip = repo.tip(MAIN);
        HookedRepo.git(HookedRepo.gitEnv(tmp), repo.bare(), "symbolic-ref", "refs/heads/caf\u00e9", MAIN)
                .check();
        m.commit("no lease");
        latin1.forEach(m::env);
        assertFenced(m.push(List.of(), "HEAD:refs/heads/caf\u00e9"), "symbolic-ref");
        assertEquals(tip, repo.tip(MAIN));

        assertRefusedAsUnnameable(hookJvm(latin1, tip + " " + m.head()));
        assertEquals(tip, repo.tip(MAIN));
    }

    /** Compiles en_US in ISO-8859-1 as {@code x.ISO-8859-1} under {@code dir}; false where that cannot be done. */
    private static boolean latin1Locale(Path dir) throws Exception {
        Files.createDirectories(dir);
        try {
            Process p = new ProcessBuilder(
                            "localedef",
                            "-i",
                            "en_US",
                            "-f",
                            "ISO-8859-1",
                            dir.resolve("x.ISO-8859-1").toString())
                    .redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            return p.waitFor(60, TimeUnit.SECONDS) && Files.isDirectory(dir.resolve("x.ISO-8859-1"));
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** Runs the hook's JVM itself, without the installed script, in {@code env}, on {@code ids refs/heads/café}. */
    private String hookJvm(Map<String, String> env, String ids) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(HookedRepo.launcher(tmp).toString(), "hook", "pre-receive")
                .directory(repo.bare().toFile());
        pb.environment().clear();
        pb.environment().putAll(HookedRepo.gitEnv(tmp));
        pb.environment().put("GIT_DIR", repo.bare().toString());
        pb.environment().putAll(env);
        pb.redirectErrorStream(true);
        Process p = pb.start();
        try (var in = p.getOutputStream()) {
            in.write((ids + " refs/heads/caf\u00e9\n").getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return p.exitValue() + "\n" + out;
    }

    private static void assertRefusedAsUnnameable(String exitAndOut) {
        assertTrue(exitAndOut.startsWith("1\n"), exitAndOut);
        assertTrue(exitAndOut.contains("REJECTED resource=- ref=- token=0 current=0 reason=bad-config"), exitAndOut);
        assertTrue(exitAndOut.contains("cannot name ref 'refs/heads/caf"), exitAndOut);
        assertTrue(exitAndOut.contains("UTF-8 locale"), exitAndOut);
        assertFalse(exitAndOut.contains("internal error"), exitAndOut);
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
