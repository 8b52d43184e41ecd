package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.testing.PostgresServer;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import dev.fence.testing.TestLauncher;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence serve} names an unsafe store's set-up at every start, and refuses a Redis that may evict keys. */
@ProcessTest
class ServeStartupTest {
    @TempDir
    Path tmp;

    private Path credentials;

    @BeforeEach
    void setUp() throws Exception {
        credentials = tmp.resolve("credentials");
        Files.writeString(credentials, "");
    }

    @Test
    void aRedisThatMayEvictKeysIsRefusedWithTheConfigExitCode() {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer redis = RedisServer.start("--maxmemory-policy", "allkeys-random")) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int exit = Main.run(
                    new Context(
                            new ByteArrayInputStream(new byte[0]),
                            new PrintWriter(out),
                            new PrintWriter(err),
                            Map.of("HOME", tmp.toString()),
                            Clock.systemUTC(),
                            tmp),
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--credentials",
                    credentials.toString(),
                    "--store",
                    redis.url());
            assertEquals(ExitCode.CONFIG.code(), exit, out + "\n" + err);
            assertTrue(
                    err.toString().contains("fence serve will not use this store: maxmemory-policy allkeys-random"),
                    err.toString());
            // The other problems of the set-up are named too.
            assertTrue(err.toString().contains("warning: redis.persistence: appendonly no"), err.toString());
            assertFalse(out.toString().contains("listening on"), out.toString());
        }
    }

    /** Starts {@code fence serve} on {@code store}, waits until it listens, stops it; returns its stderr. */
    private String serveUntilListening(String store) throws Exception {
        Path launcher = TestLauncher.write(tmp.resolve("bin/fence"));
        Process serve = new ProcessBuilder(
                        launcher.toString(),
                        "serve",
                        "--listen",
                        "127.0.0.1:0",
                        "--credentials",
                        credentials.toString(),
                        "--store",
                        store)
                .redirectOutput(tmp.resolve("out").toFile())
                .redirectError(tmp.resolve("err").toFile())
                .start();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!Files.readString(tmp.resolve("out")).contains("listening on")) {
                assertTrue(serve.isAlive(), "serve exited: " + Files.readString(tmp.resolve("err")));
                assertTrue(System.nanoTime() < deadline, "serve did not start");
                Thread.sleep(50);
            }
        } finally {
            serve.destroy();
            serve.waitFor(20, TimeUnit.SECONDS);
        }
        return Files.readString(tmp.resolve("err"));
    }

    @Test
    void aStoreThatCanLoseGrantsIsNamedOnStartAndServed() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer redis = RedisServer.start()) {
            String err = serveUntilListening(redis.url());
            String warning = "warning: redis.persistence: appendonly no and no snapshots: a restart loses every grant;"
                    + " fence then starts a new generation and voids outstanding leases; fix: ";
            assertTrue(err.contains(warning), err);
            assertEquals(err.indexOf(warning), err.lastIndexOf(warning), "once per start: " + err);
            assertFalse(err.contains("redis.eviction"), err);
            String both = Files.readString(tmp.resolve("out")) + err;
            assertEquals(both.indexOf("listening on"), both.lastIndexOf("listening on"), "said once: " + both);
        }
    }
    /**
     * PostgreSQL's unsafe settings are named at start too, one line each with what to change:
     * synchronous_commit off for the database would let a crash take back acknowledged grants.
     */
    @Test
    void aPostgresDatabaseThatCommitsWithoutWaitingIsNamedOnStart() throws Exception {
        PostgresServer pg = PostgresServer.shared();
        String database = pg.createDatabase();
        try {
            pg.execute("postgres", "ALTER DATABASE " + database + " SET synchronous_commit = off");
            String err = serveUntilListening(pg.url(database));
            String warning = "warning: postgres.synchronous_commit: synchronous_commit is 'off' for fence's role in"
                    + " this database: PostgreSQL acknowledges a commit before its own disk has it";
            assertTrue(err.contains(warning), err);
            assertEquals(err.indexOf(warning), err.lastIndexOf(warning), "once per start: " + err);
            String line =
                    err.lines().filter(l -> l.startsWith(warning)).findFirst().orElseThrow();
            assertTrue(
                    line.endsWith("; fix: ALTER ROLE postgres IN DATABASE " + database + " SET synchronous_commit = on"
                            + " (or remote_apply; it overrides postgresql.conf, the database's and the role's value)"),
                    line);
        } finally {
            pg.dropDatabase(database);
        }
    }
}
