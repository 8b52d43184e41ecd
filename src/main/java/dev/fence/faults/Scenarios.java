package dev.fence.faults;

import dev.fence.core.ConfigException;
import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** How each {@link Fault} sets its store up and injects itself into the running workload. */
final class Scenarios {
    /** How long the writes a fault is meant to lose may take to happen. */
    static final Duration LOSS_WINDOW = Duration.ofSeconds(8);

    private Scenarios() {}

    /** One fault's set-up and injection. */
    interface Scenario {
        /** Starts the store; returns the URL the clients and the hook start on. */
        String start(FaultRun run) throws IOException;

        /** Injects the fault while the workload runs; returns once the store serves again. */
        void inject(FaultRun run) throws IOException;

        /** The clients' clocks. */
        default List<Clock> clocks(int clients) {
            List<Clock> out = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                out.add(Clock.systemUTC());
            }
            return out;
        }
    }

    /** Why {@code fault} cannot run here, or null when it can. */
    static String skipReason(Fault fault, FaultRun.Tools tools) {
        if (tools.git() == null) {
            return "git is not on PATH";
        }
        if (fault == Fault.POSTGRES_PROMOTE || fault == Fault.POSTGRES_PROMOTE_ASYNC) {
            return hasPostgresStore()
                    ? PrivatePostgres.cannotRun(tools.postgresBin(), tools.runuser())
                    : "no postgresql store in this build";
        }
        if (tools.redisServer() == null) {
            return "redis-server is not on PATH";
        }
        if (tools.redisCli() == null) {
            return "redis-cli is not on PATH";
        }
        return null;
    }

    static Scenario of(Fault fault) {
        return switch (fault) {
            case REDIS_KILL_NOPERSIST -> new Kill("--save", "", "--appendonly", "no");
            case REDIS_KILL_RDB -> new KillAfterSnapshot();
            case REDIS_DEBUG_RELOAD -> new ReloadOlderSnapshot();
            case REDIS_KILL_AOF_EVERYSEC -> new Kill("--save", "", "--appendonly", "yes", "--appendfsync", "everysec");
            case REDIS_KILL_AOF_ALWAYS -> new Kill("--save", "", "--appendonly", "yes", "--appendfsync", "always");
            case REDIS_PROMOTE_LAGGING_REPLICA -> new PromoteLaggingReplica(false);
            case REDIS_PROMOTE_LAGGING_REPLICA_WAIT1 -> new PromoteLaggingReplica(true);
            case REDIS_EVICTION -> new Eviction();
            case REDIS_EVICTION_WINDOW -> new EvictionWindow();
            case CLIENT_CLOCK_SLOW -> new SlowClockFirstTouch();
            case POSTGRES_PROMOTE -> new PostgresPromote(true);
            case POSTGRES_PROMOTE_ASYNC -> new PostgresPromote(false);
        };
    }

    /** True when this build's store factory knows a PostgreSQL URL. */
    private static boolean hasPostgresStore() {
        for (String url : List.of("postgresql://127.0.0.1:1/fence", "postgres://127.0.0.1:1/fence")) {
            try (LeaseStore s = Stores.open(url, StoreOptions.defaults())) {
                return s != null;
            } catch (ConfigException e) {
                if (!String.valueOf(e.getMessage()).contains("unknown store scheme")) {
                    return true;
                }
            } catch (RuntimeException e) {
                return true;
            }
        }
        return false;
    }

    /** kill -9 mid-load, right after a push since the injection began; restart from its directory. */
    static final class Kill implements Scenario {
        private final String[] args;
        private RedisNode redis;

        Kill(String... args) {
            this.args = args;
        }

        @Override
        public String start(FaultRun run) throws IOException {
            redis = run.redis("redis", args);
            run.note("redis-server " + String.join(" ", quoted(args)) + " on port " + redis.port());
            return redis.url();
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            long mark = System.nanoTime();
            if (!run.awaitPush(mark, LOSS_WINDOW)) {
                run.note("no branch took a push in " + LOSS_WINDOW.toSeconds() + " s before the kill");
            }
            redis.kill();
            run.note("kill -9 after " + run.history.grantsSince(mark) + " grants since the injection began");
            redis.start();
            run.note("restarted on the same port; loaded: " + redis.loaded());
        }
    }

    /** Snapshot-only: BGSAVE, grants and pushes after it, kill -9, restart from the snapshot. */
    static final class KillAfterSnapshot implements Scenario {
        private RedisNode redis;

        @Override
        public String start(FaultRun run) throws IOException {
            // A save rule that never fires during a run: the harness takes the snapshot itself, when it chooses.
            redis = run.redis("redis", "--save", "3600 1", "--appendonly", "no", "--dbfilename", "dump.rdb");
            run.note("redis-server --save \"3600 1\" --appendonly no on port " + redis.port());
            return redis.url();
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            redis.cli("BGSAVE");
            redis.awaitInfo("persistence", "rdb_bgsave_in_progress", "0", Duration.ofSeconds(20));
            String status = redis.info("persistence").get("rdb_last_bgsave_status");
            long mark = System.nanoTime();
            if (!"ok".equals(status)) {
                throw new IOException("BGSAVE failed: rdb_last_bgsave_status " + status);
            }
            if (!run.awaitPush(mark, LOSS_WINDOW)) {
                run.note("no branch took a push in " + LOSS_WINDOW.toSeconds() + " s after the snapshot");
            }
            redis.kill();
            run.note("BGSAVE, then " + run.history.grantsSince(mark) + " grants, then kill -9");
            redis.start();
            run.note("restarted; loaded: " + redis.loaded());
        }
    }

    /**
     * An older snapshot loaded in place: SAVE, the dump copied aside, grants and pushes after it, the copy
     * put back and {@code DEBUG RELOAD NOSAVE}, which empties the data and loads that file without saving
     * first. The server neither restarts nor changes its replication id, so its epoch stays and the store
     * sees no new generation: only tokens above their own time keep the grants made after the reload from
     * repeating the lost ones. A marker key written after the SAVE shows that the reload rolled back.
     */
    static final class ReloadOlderSnapshot implements Scenario {
        private static final String MARKER = "faults-after-snapshot";
        private RedisNode redis;

        @Override
        public String start(FaultRun run) throws IOException {
            // No save rule: the only snapshot is the one the harness takes, and the reload must not save.
            List<String> args =
                    new ArrayList<>(List.of("--save", "", "--appendonly", "no", "--dbfilename", "dump.rdb"));
            // Redis 7 refuses DEBUG unless told otherwise; Redis 6 allows it and knows no such option.
            if (run.redisMajorVersion() >= 7) {
                args.addAll(List.of("--enable-debug-command", "local"));
            }
            redis = run.redis("redis", args.toArray(new String[0]));
            run.note("redis-server " + String.join(" ", quoted(args.toArray(new String[0]))) + " on port "
                    + redis.port());
            return redis.url();
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            String epochBefore = epoch(redis);
            redis.cli("SAVE");
            long mark = System.nanoTime();
            Path dump = redis.dir().resolve("dump.rdb");
            Path aside = redis.dir().resolve("snapshot-aside.rdb");
            Files.copy(dump, aside, StandardCopyOption.REPLACE_EXISTING);
            redis.cli("SET", MARKER, "1");
            if (!run.awaitPush(mark, LOSS_WINDOW)) {
                run.note("no branch took a push in " + LOSS_WINDOW.toSeconds() + " s after the snapshot");
            }
            Files.copy(aside, dump, StandardCopyOption.REPLACE_EXISTING);
            int lost = run.history.grantsSince(mark);
            redis.cli("DEBUG", "RELOAD", "NOSAVE");
            String marker = redis.cli("EXISTS", MARKER);
            String epochAfter = epoch(redis);
            run.note("SAVE, snapshot copied aside, then " + lost + " grants, then the copy put back and DEBUG RELOAD"
                    + " NOSAVE; the marker written after the SAVE is " + ("0".equals(marker) ? "gone" : "still there")
                    + "; run_id and master_replid " + (epochBefore.equals(epochAfter) ? "unchanged" : "changed"));
        }
    }

    /** The server's run id and replication id, which the Redis store takes for its epoch. */
    private static String epoch(RedisNode redis) throws IOException {
        return redis.info("server").get("run_id") + ":"
                + redis.info("replication").get("master_replid");
    }

    /**
     * A master and one or two replicas. The lagging replica's link is cut by pointing it at a port where
     * nothing listens (a replica stopped with SIGSTOP would still have the stream in its socket buffer, and
     * apply it when resumed before it could be promoted); the master goes on, is killed -9, and the lagging
     * replica is promoted.
     */
    static final class PromoteLaggingReplica implements Scenario {
        private final boolean wait1;
        private RedisNode master;
        private RedisNode lagging;
        private RedisNode other;

        PromoteLaggingReplica(boolean wait1) {
            this.wait1 = wait1;
        }

        @Override
        public String start(FaultRun run) throws IOException {
            master = run.redis("master", "--save", "", "--appendonly", "no");
            String port = Integer.toString(master.port());
            lagging = run.redis("replica-1", "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", port);
            lagging.awaitInfo("replication", "master_link_status", "up", Duration.ofSeconds(20));
            if (wait1) {
                other = run.redis("replica-2", "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", port);
                other.awaitInfo("replication", "master_link_status", "up", Duration.ofSeconds(20));
            }
            run.note("master on port " + master.port() + ", replica on " + lagging.port()
                    + (wait1
                            ? " (promoted later) and another on " + other.port() + "; clients and hook use ?wait=1"
                            : ""));
            return master.url() + (wait1 ? "?wait=1" : "");
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            int nowhere;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                nowhere = s.getLocalPort();
            }
            lagging.cli("REPLICAOF", "127.0.0.1", Integer.toString(nowhere));
            long mark = System.nanoTime();
            if (!run.awaitPush(mark, LOSS_WINDOW)) {
                run.note("no branch took a push in " + LOSS_WINDOW.toSeconds() + " s while the replica lagged");
            }
            master.kill();
            run.note("replica cut off from the master; " + run.history.grantsSince(mark)
                    + " grants later the master was killed -9");
            lagging.cli("REPLICAOF", "NO", "ONE");
            if (other != null) {
                // What Sentinel does: the remaining replica follows the promoted one, so WAIT 1 can succeed again.
                other.cli("REPLICAOF", "127.0.0.1", Integer.toString(lagging.port()));
                other.awaitInfo("replication", "master_link_status", "up", Duration.ofSeconds(20));
            }
            run.switchStore(lagging.url() + (wait1 ? "?wait=1" : ""));
            run.note("replica promoted (REPLICAOF NO ONE); clients and the hook's store switched to port "
                    + lagging.port());
        }
    }

    /**
     * A PostgreSQL primary and a streaming standby, synchronous ({@code synchronous_standby_names = '*'}) or
     * not. The asynchronous standby is cut off (its {@code primary_conninfo} emptied) before the injection's
     * writes, so they exist on the primary only. The primary's postmaster and backends are killed -9 right
     * after a push, the standby is promoted with {@code pg_ctl promote}, and the clients and the hook's store
     * switch to it. The promoted standby starts a new timeline, which the store must take for a new generation.
     */
    static final class PostgresPromote implements Scenario {
        private static final String DATABASE = "fence";

        private final boolean synchronous;
        private PrivatePostgres primary;
        private PrivatePostgres standby;

        PostgresPromote(boolean synchronous) {
            this.synchronous = synchronous;
        }

        @Override
        public String start(FaultRun run) throws IOException {
            primary = run.postgres("primary", Map.of("wal_level", "replica", "synchronous_commit", "on"));
            primary.execute("postgres", "CREATE DATABASE " + DATABASE);
            // Named after the copy, so that the promoted standby waits for no standby of its own.
            standby = run.standby(primary, "standby");
            if (synchronous) {
                primary.execute("postgres", "ALTER SYSTEM SET synchronous_standby_names = '*'");
                primary.execute("postgres", "SELECT pg_reload_conf()");
            }
            String state = synchronous ? "sync" : "async";
            primary.await(
                    "postgres",
                    "SELECT string_agg(sync_state, ',') FROM pg_stat_replication",
                    state,
                    Duration.ofSeconds(30));
            run.note("PostgreSQL primary on port " + primary.port() + ", " + state + " standby on " + standby.port()
                    + " (pg_basebackup -R); clients and hook use the primary");
            return primary.url(DATABASE);
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            if (!synchronous) {
                standby.execute("postgres", "ALTER SYSTEM SET primary_conninfo = ''");
                standby.execute("postgres", "SELECT pg_reload_conf()");
                primary.await("postgres", "SELECT count(*) FROM pg_stat_replication", "0", Duration.ofSeconds(10));
            }
            long mark = System.nanoTime();
            if (!run.awaitPush(mark, LOSS_WINDOW)) {
                run.note("no branch took a push in " + LOSS_WINDOW.toSeconds() + " s before the kill");
            }
            long killed = System.nanoTime();
            primary.kill();
            run.note((synchronous ? "" : "standby cut off from the primary; ") + run.history.grantsSince(mark)
                    + " grants later the primary's postmaster and backends were killed -9");
            long promoting = System.nanoTime();
            standby.promote();
            long promoted = System.nanoTime();
            int acknowledged = 0;
            int lost = 0;
            Map<String, String> kept = standby.rows(DATABASE, "SELECT resource, latest_granted FROM fence.resources");
            for (History.Grant g : run.history.grants()) {
                if (g.ackedNanos() < killed) {
                    acknowledged++;
                    String latest = kept.get(g.resource());
                    if (latest == null || Long.parseLong(latest) < g.token()) {
                        lost++;
                    }
                }
            }
            run.switchStore(standby.url(DATABASE));
            run.note("pg_ctl promote took " + (promoted - promoting) / 1_000_000 + " ms; " + lost + " of the "
                    + acknowledged + " grants acknowledged before the kill are not on the promoted standby;"
                    + " clients and the hook's store switched to port " + standby.port());
        }
    }

    /** allkeys-random and a small maxmemory under load, after the long-running clients checked the policy. */
    static final class Eviction implements Scenario {
        private RedisNode redis;

        @Override
        public String start(FaultRun run) throws IOException {
            redis = run.redis("redis", "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction");
            run.note("redis-server --maxmemory-policy noeviction on port " + redis.port());
            return redis.url();
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            long used = Long.parseLong(redis.info("memory").get("used_memory"));
            long max = used + 512 * 1024;
            redis.cli("CONFIG", "SET", "maxmemory", Long.toString(max));
            redis.cli("CONFIG", "SET", "maxmemory-policy", "allkeys-random");
            run.feed(redis, "SET faults-filler:%d " + "x".repeat(4096), 20);
            run.note("CONFIG SET maxmemory " + max + " (used " + used + ") and maxmemory-policy allkeys-random;"
                    + " a filler writes 4 KiB every 20 ms");
        }

        /** Called after the workload stopped: how much was evicted. */
        String evicted() throws IOException {
            return redis.info("stats").get("evicted_keys");
        }
    }

    /**
     * allkeys-random and a small maxmemory for a moment, while a filler writes, until some resource's state
     * hash has been evicted (at most {@link #LONGEST}); then maxmemory 0 and noeviction again. The clients'
     * calls fail while the policy allows evictions, and go on afterwards in the same generation (unless the
     * eviction took {@code fence:meta} too), against counters that restart behind the tokens already granted.
     */
    static final class EvictionWindow implements Scenario {
        static final Duration LONGEST = Duration.ofSeconds(10);
        private RedisNode redis;

        @Override
        public String start(FaultRun run) throws IOException {
            redis = run.redis("redis", "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction");
            run.note("redis-server --maxmemory-policy noeviction on port " + redis.port());
            return redis.url();
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            // The state hashes of the resources granted so far, named as the Redis store names them.
            Set<String> watched = new LinkedHashSet<>();
            for (History.Grant g : run.history.grants()) {
                String key = "fence:{" + g.resource() + "}:state";
                if (!watched.contains(key) && "1".equals(redis.cli("EXISTS", key))) {
                    watched.add(key);
                }
            }
            if (watched.isEmpty()) {
                throw new IOException("no resource's state hash found in the Redis before the window");
            }
            long evictedBefore = Long.parseLong(redis.info("stats").get("evicted_keys"));
            long used = Long.parseLong(redis.info("memory").get("used_memory"));
            long max = used + 256 * 1024;
            long opened = System.nanoTime();
            redis.cli("CONFIG", "SET", "maxmemory", Long.toString(max));
            redis.cli("CONFIG", "SET", "maxmemory-policy", "allkeys-random");
            run.feed(redis, "SET faults-filler:%d " + "x".repeat(4096), 5);
            List<String> gone = new ArrayList<>();
            long deadline = opened + LONGEST.toNanos();
            while (gone.isEmpty() && System.nanoTime() < deadline) {
                for (String key : watched) {
                    if ("0".equals(redis.cli("EXISTS", key))) {
                        gone.add(key);
                    }
                }
                RedisNode.sleep(10);
            }
            // maxmemory first: with no limit nothing is evicted, whatever the policy says meanwhile.
            redis.cli("CONFIG", "SET", "maxmemory", "0");
            redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
            long closed = System.nanoTime();
            run.stopFeeders();
            long evicted = Long.parseLong(redis.info("stats").get("evicted_keys")) - evictedBefore;
            boolean meta = "1".equals(redis.cli("EXISTS", "fence:meta"));
            run.note("CONFIG SET maxmemory " + max + " (used " + used + ") and maxmemory-policy allkeys-random for "
                    + (closed - opened) / 1_000_000 + " ms while a filler wrote 4 KiB every 5 ms, then maxmemory 0"
                    + " and noeviction; " + evicted + " keys evicted, among them the state of at least " + gone.size()
                    + " of "
                    + watched.size() + " resources " + gone + "; fence:meta " + (meta ? "kept" : "evicted too"));
        }
    }

    /** A client an hour slow is the first to touch a Redis that came back empty. */
    static final class SlowClockFirstTouch implements Scenario {
        static final Duration SLOW = Duration.ofHours(1);
        private RedisNode redis;

        @Override
        public List<Clock> clocks(int clients) {
            List<Clock> out = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                out.add(i == 0 ? Clock.offset(Clock.systemUTC(), SLOW.negated()) : Clock.systemUTC());
            }
            return out;
        }

        @Override
        public String start(FaultRun run) throws IOException {
            redis = run.redis("redis", "--save", "", "--appendonly", "no");
            run.note("redis-server without persistence on port " + redis.port() + "; agent-1's clock is "
                    + SLOW.toMinutes() + " min slow");
            return redis.url();
        }

        @Override
        public void inject(FaultRun run) throws IOException {
            if (!run.workload.pause(Duration.ofSeconds(60))) {
                run.note("not every client paused within 60 s");
            }
            redis.kill();
            redis.start();
            // agent-1 is the first to touch the empty store.
            run.workload.service(0).identity();
            run.workload.resume();
            run.note("clients paused, kill -9, restarted empty, agent-1 touched it first, clients resumed");
        }
    }

    private static List<String> quoted(String[] args) {
        List<String> out = new ArrayList<>();
        for (String a : args) {
            out.add(a.isEmpty() || a.contains(" ") ? "\"" + a + "\"" : a);
        }
        return out;
    }
}
