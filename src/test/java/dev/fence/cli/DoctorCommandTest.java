package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.Identities;
import dev.fence.core.LeaseStore;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.PostgresServer;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import dev.fence.testing.SentinelCluster;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence doctor} on real stores: each finding's status and fix, the JSON form and the exit status. */
@ProcessTest
class DoctorCommandTest {
    @TempDir
    Path tmp;

    record Result(int exit, String out, String err) {
        JsonNode json() throws Exception {
            return Json.read(out.strip());
        }

        /** The finding of {@code check}, failing the test when there is none. */
        JsonNode finding(String check) throws Exception {
            for (JsonNode f : json().get("findings")) {
                if (f.get("check").asText().equals(check)) {
                    return f;
                }
            }
            throw new AssertionError("no finding " + check + " in " + out + err);
        }

        String status(String check) throws Exception {
            return finding(check).get("status").asText();
        }

        String detail(String check) throws Exception {
            return finding(check).get("detail").asText();
        }
    }

    private Result doctor(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Map<String, String> e = new HashMap<>(env);
        e.putIfAbsent("HOME", tmp.toString());
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                e,
                Clock.systemUTC(),
                tmp);
        String[] all = new String[args.length + 1];
        all[0] = "doctor";
        System.arraycopy(args, 0, all, 1, args.length);
        return new Result(Main.run(ctx, all), out.toString(), err.toString());
    }

    private Result doctor(String... args) {
        return doctor(Map.of(), args);
    }

    @Test
    void aWritableSqliteFileIsHealthyAndTheJsonHasTheContractFields() throws Exception {
        Path db = tmp.resolve("fence.db");
        String url = "sqlite:" + db;
        assertEquals(0, doctor("--store", url).exit(), "first run creates nothing, but the file is missing");
        assertFalse(Files.exists(db), "doctor must not create the store file");

        // Make the file as a fence command would, then examine it.
        fenceAcquire(url);
        Result r = doctor("--store", url, "--json");
        assertEquals(0, r.exit(), r.out() + r.err());
        JsonNode json = r.json();
        assertTrue(json.get("ok").asBoolean());
        for (JsonNode f : json.get("findings")) {
            assertTrue(f.has("check") && f.has("status") && f.has("detail") && f.has("fix"), f.toString());
            assertEquals("ok", f.get("status").asText(), f.toString());
        }
        assertEquals("ok", r.status("sqlite.file"));
        assertEquals("ok", r.status("store.reachable"));
        assertEquals("ok", r.status("store.writable"));
        assertTrue(r.finding("store.writable").get("fix").isNull());

        Result text = doctor("--store", url);
        assertTrue(text.out().contains("ok    sqlite.file"), text.out());
        assertTrue(text.out().contains("fence doctor: no failures, no warnings"), text.out());
    }

    @Test
    void aSqliteFileOfAnotherUserWarnsAndOneThatCannotBeCreatedFails() throws Exception {
        Path db = tmp.resolve("fence.db");
        Files.writeString(tmp.resolve("x"), "");
        String url = "sqlite:" + db;
        fenceAcquire(url);
        String owner = Files.getOwner(db).getName();
        String other = owner.equals("nobody") ? "root" : "nobody";
        assumeTrue(!other.equals("root"), "the test runs as nobody");
        // The same file, judged for another user than the one who made it.
        Result r = doctor(Map.of("USER", other), "--store", url, "--json");
        assertEquals(0, r.exit(), "a warning is not a failure: " + r.out());
        JsonNode f = r.finding("sqlite.file");
        assertEquals("warn", f.get("status").asText(), f.toString());
        assertTrue(f.get("detail").asText().contains("owned by " + owner), f.toString());
        assertTrue(f.get("fix").asText().startsWith("chown " + other), f.toString());

        // A path under a regular file: nothing can create the store there.
        Result bad = doctor("--store", "sqlite:" + tmp.resolve("x").resolve("fence.db"), "--json");
        assertEquals(ExitCode.CONFIG.code(), bad.exit(), bad.out());
        assertEquals("fail", bad.status("sqlite.file"));
        assertFalse(bad.json().get("ok").asBoolean());
    }

    /**
     * The store holds the proof key: a file every user on the host may read is named, with its {@code -wal}
     * and {@code -shm} files, and the chmod that closes them. A warning: fence works. A group that may read
     * it is the operator's choice.
     */
    @Test
    void aSqliteFileEveryUserMayReadWarnsWithTheChmodThatClosesIt() throws Exception {
        Path db = tmp.resolve("fence.db");
        String url = "sqlite:" + db;
        fenceAcquire(url);
        assertEquals("ok", doctor("--store", url, "--json").status("sqlite.others"));

        Files.setPosixFilePermissions(db, PosixFilePermissions.fromString("rw-r--r--"));
        Result r = doctor("--store", url, "--json");
        assertEquals(0, r.exit(), "a warning is not a failure: " + r.out());
        JsonNode f = r.finding("sqlite.others");
        assertEquals("warn", f.get("status").asText(), f.toString());
        assertTrue(f.get("detail").asText().startsWith(db + " is readable by every user on this host"), f.toString());
        assertTrue(f.get("detail").asText().contains("proof key"), f.toString());
        assertEquals("chmod o-rwx " + db, f.get("fix").asText(), f.toString());
        Result text = doctor("--store", url);
        assertTrue(text.out().contains("warn  sqlite.others"), text.out());
        assertTrue(text.out().contains("fix: chmod o-rwx " + db), text.out());

        // While a process has the store open, SQLite's -wal and -shm files take the file's mode: named too.
        try (LeaseStore open = Stores.open(url, StoreOptions.defaults())) {
            open.identity(Identities.candidate(Clock.systemUTC().instant()));
            JsonNode withLog = doctor("--store", url, "--json").finding("sqlite.others");
            assertEquals(
                    "chmod o-rwx " + db + " " + db + "-wal " + db + "-shm",
                    withLog.get("fix").asText());
        }

        Files.setPosixFilePermissions(db, PosixFilePermissions.fromString("rw-rw----"));
        assertEquals("ok", doctor("--store", url, "--json").status("sqlite.others"), "a group is the operator's");
    }

    @Test
    void aRedisThatMayEvictKeysFailsAndOneThatPersistsEveryWriteIsHealthy() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer evicting = RedisServer.start("--maxmemory-policy", "allkeys-lru");
                RedisServer volatileLru = RedisServer.start("--maxmemory-policy", "volatile-lru");
                RedisServer safe = RedisServer.start(
                        "--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction")) {
            Result r = doctor("--store", evicting.url(), "--json");
            assertEquals(ExitCode.CONFIG.code(), r.exit(), r.out() + r.err());
            JsonNode f = r.finding("redis.eviction");
            assertEquals("fail", f.get("status").asText());
            assertTrue(f.get("detail").asText().contains("allkeys-lru"), f.toString());
            assertTrue(f.get("fix").asText().contains("noeviction"), f.toString());
            // RedisServer runs without persistence: named, as a warning.
            JsonNode p = r.finding("redis.persistence");
            assertEquals("warn", p.get("status").asText());
            assertTrue(p.get("detail").asText().contains("appendonly no"), p.toString());
            assertTrue(p.get("detail").asText().contains("new generation"), p.toString());

            Result v = doctor("--store", volatileLru.url(), "--json");
            assertEquals("warn", v.status("redis.eviction"));
            assertTrue(v.finding("redis.eviction").get("detail").asText().contains("have none"), v.out());

            Result ok = doctor("--store", safe.url(), "--json");
            assertEquals(0, ok.exit(), ok.out() + ok.err());
            for (String check : new String[] {
                "redis.role",
                "redis.eviction",
                "redis.persistence",
                "redis.replicas",
                "store.reachable",
                "store.writable"
            }) {
                assertEquals("ok", ok.status(check), check + ": " + ok.out());
            }
            assertTrue(ok.json().get("ok").asBoolean());
        }
    }

    @Test
    void everysecPersistenceAndUnsafeReplicationAreNamed() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer master = RedisServer.start("--appendonly", "yes", "--appendfsync", "everysec");
                RedisServer replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()))) {
            awaitReplica(master);
            Result r = doctor("--store", master.url(), "--json");
            assertEquals(0, r.exit(), r.out() + r.err());
            JsonNode p = r.finding("redis.persistence");
            assertEquals("warn", p.get("status").asText());
            assertTrue(p.get("detail").asText().contains("up to 1 s of grants"), p.toString());
            JsonNode rep = r.finding("redis.replicas");
            assertEquals("warn", rep.get("status").asText());
            assertTrue(rep.get("fix").asText().contains("min-replicas-to-write"), rep.toString());

            assertEquals("+OK", master.command("CONFIG", "SET", "min-replicas-to-write", "2"));
            Result noReplicas = doctor("--store", master.url(), "--json");
            assertEquals(ExitCode.CONFIG.code(), noReplicas.exit(), noReplicas.out());
            assertEquals("fail", noReplicas.status("redis.replicas"));
            assertEquals("fail", noReplicas.status("store.writable"), "Redis refuses the write (NOREPLICAS)");

            assertEquals("+OK", master.command("CONFIG", "SET", "min-replicas-to-write", "1"));
            assertEquals("ok", doctor("--store", master.url(), "--json").status("redis.replicas"));

            // Pointed at the replica: it refuses fence's writes.
            Result onReplica = doctor("--store", replica.url(), "--json");
            assertEquals(ExitCode.CONFIG.code(), onReplica.exit(), onReplica.out());
            assertEquals("fail", onReplica.status("redis.role"));
            assertTrue(onReplica.finding("redis.role").get("fix").asText().contains("redis-sentinel://"));
            // Even reading the identity writes (the server's epoch): refused.
            JsonNode reach = onReplica.finding("store.reachable");
            assertEquals("fail", reach.get("status").asText());
            assertTrue(reach.get("detail").asText().contains("READONLY"), reach.toString());
            assertTrue(reach.get("fix").asText().contains("master"), reach.toString());
        }
    }

    @Test
    void anUnreachableStoreFailsWithoutWaitingTwice() throws Exception {
        Result r = doctor("--store", "redis://u:secret@127.0.0.1:1", "--json");
        assertEquals(ExitCode.CONFIG.code(), r.exit(), r.out() + r.err());
        assertEquals("fail", r.status("store.reachable"));
        assertEquals(1, r.json().get("findings").size(), r.out());
        assertFalse(r.out().contains("secret"), r.out());
    }

    @Test
    void throughSentinelTheMasterIsJudged() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (SentinelCluster cluster = SentinelCluster.start(1, 1, Duration.ofSeconds(30), null)) {
            Result r = doctor("--store", cluster.url(), "--json");
            JsonNode role = r.finding("redis.role");
            assertEquals("ok", role.get("status").asText(), r.out());
            assertTrue(role.get("detail").asText().contains(":" + cluster.masterPort()), role.toString());
            assertTrue(role.get("detail").asText().contains("sentinels"), role.toString());
            assertEquals("ok", r.status("store.writable"), r.out());
        }
    }

    /**
     * A PostgreSQL store's set-up is judged: synchronous_commit off for its database warns with the statement
     * that fixes it (fence's own sessions commit with on all the same), and synchronous_standby_names is
     * judged beside it. Access is checked as for every store.
     */
    @Test
    void aPostgresDatabaseThatCommitsWithoutWaitingIsAWarningWithItsFix() throws Exception {
        PostgresServer pg = PostgresServer.shared();
        String database = pg.createDatabase();
        try {
            Result safe = doctor("--store", pg.url(database), "--json");
            assertEquals(0, safe.exit(), safe.out() + safe.err());
            assertEquals("ok", safe.status("postgres.synchronous_commit"), safe.out());
            assertEquals("ok", safe.status("store.reachable"));
            assertEquals("ok", safe.status("store.writable"));
            String names = pg.setting(database, "synchronous_standby_names");
            assertEquals(names.isBlank() ? "warn" : "ok", safe.status("postgres.synchronous_standby_names"));

            pg.execute("postgres", "ALTER DATABASE " + database + " SET synchronous_commit = off");
            Result r = doctor("--store", pg.url(database), "--json");
            assertEquals(0, r.exit(), "a warning is not a failure: " + r.out() + r.err());
            JsonNode f = r.finding("postgres.synchronous_commit");
            assertEquals("warn", f.get("status").asText(), f.toString());
            assertTrue(f.get("detail").asText().startsWith("synchronous_commit is 'off'"), f.toString());
            assertTrue(f.get("detail").asText().contains("can lose acknowledged grants"), f.toString());
            assertTrue(
                    f.get("fix")
                            .asText()
                            .startsWith("ALTER ROLE postgres IN DATABASE " + database + " SET synchronous_commit = on"),
                    f.toString());
            assertEquals("ok", r.status("store.writable"));
            Result text = doctor("--store", pg.url(database));
            assertTrue(text.out().contains("warn  postgres.synchronous_commit"), text.out());
            assertTrue(text.out().contains("fix: ALTER ROLE postgres IN DATABASE " + database), text.out());
        } finally {
            pg.dropDatabase(database);
        }
    }

    @Test
    void hookIdentityShowsThePusherAndRepoIdTheHookResolvesAndWarnsOnTheSharedAccount() throws Exception {
        Path bare = tmp.resolve("srv/app.git");
        dev.fence.testing.GitProcess.run(
                tmp, dev.fence.testing.GitProcess.cleanEnv(tmp), "init", "-q", "--bare", bare.toString());
        Files.writeString(bare.resolve("fence.conf"), "agent-pushers = agent-*\n");
        String owner = Files.getOwner(bare).getName();
        String store = "sqlite:" + tmp.resolve("fence.db");
        String[] args = {"--store", store, "--repo", bare.toString(), "--json"};

        // The other --repo checks judge the hooks (none are installed here); this one is about identity.
        JsonNode f = doctor(withPath("GL_USER", "agent-a", "USER", owner), args).finding("hook.identity");
        assertEquals("ok", f.get("status").asText(), f.toString());
        String detail = f.get("detail").asText();
        assertTrue(
                detail.contains(
                        "pusher 'agent-a' from GL_USER (pusher-variables: GL_USER, REMOTE_USER, USER, LOGNAME)"),
                detail);
        assertTrue(detail.contains("(an agent pusher), repo id 'app'"), detail);

        JsonNode w = doctor(withPath("USER", owner), args).finding("hook.identity");
        assertEquals("warn", w.get("status").asText(), w.toString());
        assertTrue(w.get("detail").asText().contains("the account owning the repository"), w.toString());
        assertTrue(w.get("fix").asText().contains("pusher-variables"), w.toString());

        Result none = doctor(withPath(), args);
        assertEquals(6, none.exit(), none.out());
        JsonNode n = none.finding("hook.identity");
        assertEquals("fail", n.get("status").asText());
        assertTrue(
                n.get("detail").asText().contains("none of GL_USER, REMOTE_USER, USER, LOGNAME is set"), n.toString());

        Files.writeString(bare.resolve("fence.conf"), "pusher-variables = SSH PUSHER\n");
        Result broken = doctor(withPath("USER", "x"), args);
        assertEquals(6, broken.exit());
        assertEquals("fail", broken.status("hook.identity"));
        assertTrue(broken.finding("hook.identity").get("detail").asText().contains("pusher-variables"), broken.out());

        Result noRepo = doctor(withPath("USER", "x"), "--store", store, "--json");
        for (JsonNode x : noRepo.json().get("findings")) {
            assertFalse(x.get("check").asText().equals("hook.identity"), "only with --repo");
        }
    }

    /** {@code pairs} as an environment, with the PATH the repository checks run git from. */
    private static Map<String, String> withPath(String... pairs) {
        Map<String, String> env = new HashMap<>();
        for (int k = 0; k < pairs.length; k += 2) {
            env.put(pairs[k], pairs[k + 1]);
        }
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        return env;
    }

    private void fenceAcquire(String url) {
        int exit = Main.run(
                new Context(
                        new ByteArrayInputStream(new byte[0]),
                        new PrintWriter(new StringWriter()),
                        new PrintWriter(new StringWriter()),
                        Map.of("HOME", tmp.toString()),
                        Clock.systemUTC(),
                        tmp),
                "lease",
                "acquire",
                "--store",
                url,
                "--resource",
                "db/migrations",
                "--holder",
                "a");
        assertEquals(0, exit);
    }

    private static void awaitReplica(RedisServer master) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            try (redis.clients.jedis.Jedis j = new redis.clients.jedis.Jedis("127.0.0.1", master.port())) {
                if (j.info("replication").contains("state=online")) {
                    return;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the replica did not come online");
    }
}
