package dev.fence.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A private Redis Sentinel set-up for tests: a master, its replicas and sentinels, each a {@code
 * redis-server} child process on a free loopback port with its own configuration file (Sentinel rewrites
 * the files as it reconfigures the servers). No persistence; everything lives in a temporary directory
 * deleted on {@link #close()}, and a JVM shutdown hook kills whatever still runs.
 *
 * <p>{@link #start} returns once the sentinels know the replicas and each other, so a failover can begin
 * at once. Not thread-safe: one test drives one cluster.
 */
public final class SentinelCluster implements AutoCloseable {
    /** The name the sentinels monitor the master under. */
    public static final String MASTER = "fence-master";

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Set<SentinelCluster> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> RUNNING.forEach(SentinelCluster::close), "sentinel-cleanup"));
    }

    private final Path dir;
    private final List<Node> data = new ArrayList<>();
    private final List<Node> sentinels = new ArrayList<>();
    private final String sentinelPassword;

    private SentinelCluster(Path dir, String sentinelPassword) {
        this.dir = dir;
        this.sentinelPassword = sentinelPassword;
    }

    /**
     * Starts a master, {@code replicas} replicas of it and {@code sentinels} sentinels (quorum: a majority)
     * that take the master for down after {@code downAfter} without an answer.
     *
     * @param sentinelPassword the sentinels' {@code requirepass}, or null for none
     */
    public static SentinelCluster start(int replicas, int sentinels, Duration downAfter, String sentinelPassword) {
        if (RedisServer.findExecutable() == null) {
            throw new IllegalStateException("no redis-server on the PATH");
        }
        SentinelCluster cluster;
        try {
            cluster = new SentinelCluster(Files.createTempDirectory("fence-sentinel-"), sentinelPassword);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        RUNNING.add(cluster);
        try {
            cluster.launch(replicas, sentinels, downAfter);
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** {@code redis-sentinel://127.0.0.1:<port>,…/fence-master}, the sentinels in start order. */
    public String url() {
        List<String> hosts = new ArrayList<>();
        for (Node s : sentinels) {
            hosts.add("127.0.0.1:" + s.port);
        }
        return "redis-sentinel://" + String.join(",", hosts) + "/" + MASTER;
    }

    /** The sentinels' ports, in start order. */
    public List<Integer> sentinelPorts() {
        return sentinels.stream().map(n -> n.port).toList();
    }

    /** The data servers' ports: the first master, then its replicas. */
    public List<Integer> dataPorts() {
        return data.stream().map(n -> n.port).toList();
    }

    /** The master's port as the first sentinel that answers names it. */
    public int masterPort() {
        for (Node s : sentinels) {
            if (!s.isRunning()) {
                continue;
            }
            try (Jedis j = jedis(s)) {
                List<String> addr = j.sentinelGetMasterAddrByName(MASTER);
                return Integer.parseInt(addr.get(1));
            } catch (JedisException e) {
                // try the next one
            }
        }
        throw new IllegalStateException("no sentinel names the master");
    }

    /** A connection to the data server on {@code port}. */
    public Jedis server(int port) {
        return jedis(node(port));
    }

    /**
     * Makes a sentinel promote a replica ({@code SENTINEL FAILOVER}) and waits until the set-up is stable
     * again: every sentinel names the new master, and every other running server replicates from it.
     *
     * @return the new master's port
     */
    public int failover() {
        int old = masterPort();
        Node sentinel = sentinels.get(0);
        awaitTrue("SENTINEL FAILOVER to be accepted", () -> {
            try (Jedis j = jedis(sentinel)) {
                return "OK".equals(j.sentinelFailover(MASTER));
            } catch (JedisException e) {
                // NOGOODSLAVE while the sentinel has not yet seen the replica answer; INPROG
                return false;
            }
        });
        awaitTrue("the sentinels to name a new master", () -> masterPort() != old);
        awaitStable();
        return masterPort();
    }

    /** Kills the data server on {@code port} with SIGKILL: its data is gone. */
    public void kill(int port) {
        node(port).stop();
    }

    /** Kills the data server on {@code port} and starts it again, empty (a restart without persistence). */
    public void restartEmpty(int port) {
        Node n = node(port);
        n.stop();
        n.launch();
    }

    /** Deletes every key on the master. */
    public void flushMaster() {
        try (Jedis j = server(masterPort())) {
            j.flushAll();
        }
    }

    /**
     * Waits until every running sentinel names the same master, it says it is one, and every other running
     * data server replicates from it with its link up.
     */
    public void awaitStable() {
        awaitTrue("the set-up to settle on one master", this::stable);
    }

    /** Kills every process and deletes the directory. Never throws. */
    @Override
    public void close() {
        for (Node n : sentinels) {
            n.stop();
        }
        for (Node n : data) {
            n.stop();
        }
        RUNNING.remove(this);
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // A leftover temp directory is harmless.
        }
    }

    private void launch(int replicas, int sentinelCount, Duration downAfter) {
        Node master = new Node("master", freePort(), false);
        master.write(List.of());
        master.launch();
        data.add(master);
        for (int i = 0; i < replicas; i++) {
            Node replica = new Node("replica" + i, freePort(), false);
            replica.write(List.of("replicaof 127.0.0.1 " + master.port));
            replica.launch();
            data.add(replica);
        }
        awaitTrue("the replicas to sync", () -> {
            for (Node r : data.subList(1, data.size())) {
                if (!info(r).contains("master_link_status:up")) {
                    return false;
                }
            }
            return true;
        });
        int quorum = sentinelCount / 2 + 1;
        for (int i = 0; i < sentinelCount; i++) {
            Node s = new Node("sentinel" + i, freePort(), true);
            List<String> lines = new ArrayList<>(List.of(
                    "sentinel monitor " + MASTER + " 127.0.0.1 " + master.port + " " + quorum,
                    "sentinel down-after-milliseconds " + MASTER + " " + downAfter.toMillis(),
                    "sentinel failover-timeout " + MASTER + " 10000",
                    "sentinel parallel-syncs " + MASTER + " 1"));
            if (sentinelPassword != null) {
                lines.add("requirepass " + sentinelPassword);
                // The sentinels log in to each other with it too.
                lines.add("sentinel sentinel-pass " + sentinelPassword);
            }
            s.write(lines);
            s.launch();
            sentinels.add(s);
        }
        awaitTrue("the sentinels to know the replicas and each other", () -> {
            for (Node s : sentinels) {
                try (Jedis j = jedis(s)) {
                    List<Map<String, String>> seen = j.sentinelReplicas(MASTER);
                    long good = seen.stream()
                            .filter(r -> "slave".equals(r.get("flags")))
                            .count();
                    if (good != replicas || j.sentinelSentinels(MASTER).size() != sentinelCount - 1) {
                        return false;
                    }
                }
            }
            return true;
        });
    }

    private boolean stable() {
        Integer master = null;
        for (Node s : sentinels) {
            if (!s.isRunning()) {
                continue;
            }
            int named;
            try (Jedis j = jedis(s)) {
                named = Integer.parseInt(j.sentinelGetMasterAddrByName(MASTER).get(1));
            } catch (JedisException e) {
                return false;
            }
            if (master != null && master != named) {
                return false;
            }
            master = named;
        }
        if (master == null) {
            return false;
        }
        for (Node n : data) {
            if (!n.isRunning()) {
                continue;
            }
            String info;
            try {
                info = info(n);
            } catch (JedisException e) {
                return false;
            }
            if (n.port == master) {
                if (!info.contains("role:master")) {
                    return false;
                }
            } else if (!info.contains("role:slave")
                    || !info.contains("master_port:" + master)
                    || !info.contains("master_link_status:up")) {
                return false;
            }
        }
        return true;
    }

    private String info(Node n) {
        try (Jedis j = jedis(n)) {
            return j.info("replication");
        }
    }

    private Node node(int port) {
        for (Node n : data) {
            if (n.port == port) {
                return n;
            }
        }
        throw new IllegalArgumentException("no data server on port " + port);
    }

    private Jedis jedis(Node n) {
        DefaultJedisClientConfig.Builder config =
                DefaultJedisClientConfig.builder().connectionTimeoutMillis(2000).socketTimeoutMillis(5000);
        if (n.sentinel && sentinelPassword != null) {
            config.password(sentinelPassword);
        }
        return new Jedis(new HostAndPort("127.0.0.1", n.port), config.build());
    }

    private static void awaitTrue(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (JedisException | IllegalStateException e) {
                // not yet
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + what, e);
            }
        }
        throw new IllegalStateException("timed out waiting for " + what);
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = socket.getLocalPort();
            // The machine's shared Redis and Sentinel's default port: never even risk a test there.
            return port == 6379 || port == 26379 ? freePort() : port;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One redis-server process with its configuration file. */
    private final class Node {
        final String name;
        final int port;
        final boolean sentinel;
        final Path conf;
        Process process;

        Node(String name, int port, boolean sentinel) {
            this.name = name;
            this.port = port;
            this.sentinel = sentinel;
            this.conf = dir.resolve(name + ".conf");
        }

        void write(List<String> extra) {
            List<String> lines = new ArrayList<>(
                    List.of("port " + port, "bind 127.0.0.1", "daemonize no", "dir " + dir, "logfile \"\""));
            if (!sentinel) {
                lines.add("save \"\"");
                lines.add("appendonly no");
                lines.add("dbfilename " + name + ".rdb");
            }
            lines.addAll(extra);
            try {
                Files.write(conf, lines);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        void launch() {
            List<String> command = new ArrayList<>(List.of(RedisServer.findExecutable(), conf.toString()));
            if (sentinel) {
                command.add("--sentinel");
            }
            try {
                process = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve(name + ".log").toFile())
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            awaitTrue(name + " to answer PING", () -> {
                if (!process.isAlive()) {
                    throw new IllegalArgumentException(name + " exited at start: " + log());
                }
                try (Jedis j = jedis(this)) {
                    return "PONG".equals(j.ping());
                }
            });
        }

        boolean isRunning() {
            return process != null && process.isAlive();
        }

        void stop() {
            if (process != null) {
                process.destroyForcibly();
                try {
                    process.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                process = null;
            }
        }

        String log() {
            try {
                return Files.readString(dir.resolve(name + ".log"));
            } catch (IOException e) {
                return "(no log)";
            }
        }
    }
}
