package dev.fence.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.postgresql.Driver;

/**
 * A PostgreSQL server for tests, on loopback. {@link #shared()} is the machine's server (127.0.0.1:5432,
 * user {@code postgres}, trust authentication) when one answers there, else (or with {@value
 * #PRIVATE_PROPERTY}{@code =private}) one private server started once for the JVM from the installed
 * binaries. {@link #startPrivate} starts a server of a test's own in a
 * temporary directory, on a free port, and {@link #startStandby} a streaming standby of one; a test may
 * kill, promote and stop them.
 *
 * <p>{@code initdb} refuses to run as root: as root, every server command runs as the {@code postgres}
 * user (which the Debian package creates) through {@code runuser}. Private servers run with {@code
 * fsync=off}: the tests kill processes, never the machine, and the kernel keeps what a killed process
 * wrote. A JVM shutdown hook stops every private server still running.
 */
public final class PostgresServer implements AutoCloseable {
    /** The machine's server, as the machines this project runs on have it. */
    public static final int MACHINE_PORT = 5432;

    /**
     * Set to {@code private} ({@code -Dfence.test.postgres=private}) to leave the machine's server alone and
     * share a private one, as on a machine without it.
     */
    public static final String PRIVATE_PROPERTY = "fence.test.postgres";

    private static final String USER = "postgres";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Set<PostgresServer> RUNNING = ConcurrentHashMap.newKeySet();
    private static PostgresServer shared;

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> RUNNING.forEach(PostgresServer::close), "postgres-cleanup"));
    }

    private final int port;
    /** The directory holding data/ and the log; null for the machine's server. */
    private final Path dir;

    private PostgresServer(int port, Path dir) {
        this.port = port;
        this.dir = dir;
    }

    /**
     * The server the contract tests share: the machine's when it answers on {@value #MACHINE_PORT}, else a
     * private one, started on first use and stopped when the JVM exits.
     *
     * @throws IllegalStateException when there is neither
     */
    public static synchronized PostgresServer shared() {
        if (shared == null) {
            PostgresServer machine = new PostgresServer(MACHINE_PORT, null);
            boolean usePrivate = "private".equals(System.getProperty(PRIVATE_PROPERTY));
            shared = !usePrivate && machine.answers() ? machine : startPrivate(Map.of());
        }
        return shared;
    }

    /**
     * Starts a new server of its own: {@code initdb} in a new temporary directory, then {@code pg_ctl start}
     * on a free loopback port with {@code settings} added to its configuration.
     *
     * @param settings configuration lines, e.g. {@code synchronous_standby_names -> "'*'"} (values as
     *     {@code postgresql.conf} spells them)
     */
    public static PostgresServer startPrivate(Map<String, String> settings) {
        Path bin = binDir();
        PostgresServer server = new PostgresServer(freePort(), newDirectory());
        RUNNING.add(server);
        server.runAsServerUser(
                List.of(
                        bin.resolve("initdb").toString(),
                        "-D",
                        server.data().toString(),
                        "-U",
                        USER,
                        "-A",
                        "trust",
                        "-E",
                        "UTF8",
                        "--locale=C",
                        "--no-sync"),
                START_TIMEOUT);
        server.configure(settings);
        server.start();
        return server;
    }

    /**
     * Makes a standby of this (private, running) server with {@code pg_basebackup -R} in a new temporary
     * directory and starts it on a free port, streaming from this one.
     *
     * @param settings configuration lines added after those copied from this server
     */
    public PostgresServer startStandby(Map<String, String> settings) {
        requirePrivate();
        PostgresServer standby = new PostgresServer(freePort(), newDirectory());
        RUNNING.add(standby);
        runAsServerUser(
                List.of(
                        binDir().resolve("pg_basebackup").toString(),
                        "-h",
                        "127.0.0.1",
                        "-p",
                        Integer.toString(port),
                        "-U",
                        USER,
                        "-D",
                        standby.data().toString(),
                        "-R",
                        "-X",
                        "stream",
                        "--checkpoint=fast",
                        "--no-sync"),
                START_TIMEOUT);
        standby.configure(settings);
        standby.start();
        return standby;
    }

    public int port() {
        return port;
    }

    /** True for a server this fixture started (not the machine's). */
    public boolean isPrivate() {
        return dir != null;
    }

    /** {@code postgresql://postgres@127.0.0.1:<port>/<database>}, a fence store URL. */
    public String url(String database) {
        return "postgresql://" + USER + "@127.0.0.1:" + port + "/" + database;
    }

    /** A superuser connection to {@code database}, in autocommit mode; the caller closes it. */
    public Connection connect(String database) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", USER);
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "30");
        p.setProperty("ApplicationName", "fence-test");
        Connection c = new Driver().connect("jdbc:postgresql://127.0.0.1:" + port + "/" + database, p);
        if (c == null) {
            throw new SQLException("the driver refused its own URL");
        }
        return c;
    }

    /** Runs {@code sql} as the superuser in {@code database}. */
    public void execute(String database, String sql) {
        try (Connection c = connect(database);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("on " + this + ": " + sql + ": " + e.getMessage(), e);
        }
    }

    /** The first column of the first row of {@code sql} in {@code database}, as text (null for none). */
    public String queryString(String database, String sql) {
        try (Connection c = connect(database);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IllegalStateException("on " + this + ": " + sql + ": " + e.getMessage(), e);
        }
    }

    /** Creates a database of its own for a test ({@code fence_test_<random>}) and returns its name. */
    public String createDatabase() {
        String name =
                "fence_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        execute("postgres", "CREATE DATABASE " + name);
        return name;
    }

    /** Drops {@code database}, ending the sessions still in it. */
    public void dropDatabase(String database) {
        execute("postgres", "DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }

    /**
     * Kills the server as a crash of its machine would: SIGKILL to the postmaster and every process it
     * started, all at once, with no shutdown.
     */
    public void kill() {
        requirePrivate();
        long pid = postmasterPid();
        ProcessHandle.of(pid).ifPresent(pm -> {
            List<ProcessHandle> all = new ArrayList<>(pm.descendants().toList());
            all.add(0, pm);
            all.forEach(ProcessHandle::destroyForcibly);
            // Polled: onExit() of a process that is not this JVM's child checks only every so often, and a
            // killed process stays a zombie until the init process reaps it, which some do only now and then.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (all.stream().anyMatch(PostgresServer::running)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the processes of " + this + " did not die");
                }
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }
        });
    }

    /** Promotes this standby to primary and waits until it takes writes ({@code pg_ctl promote -w}). */
    public void promote() {
        requirePrivate();
        runAsServerUser(
                List.of(binDir().resolve("pg_ctl").toString(), "promote", "-w", "-t", "60", "-D", data().toString()),
                START_TIMEOUT);
    }

    /** The server's log, for failure messages ("" for the machine's server). */
    public String log() {
        if (dir == null) {
            return "";
        }
        try {
            return Files.readString(dir.resolve("server.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Stops a private server ({@code pg_ctl stop -m immediate}, then a kill) and deletes its directory. */
    @Override
    public void close() {
        if (dir == null || !RUNNING.remove(this)) {
            return;
        }
        try {
            if (Files.exists(data().resolve("postmaster.pid"))) {
                runAsServerUser(
                        List.of(
                                binDir().resolve("pg_ctl").toString(),
                                "stop",
                                "-m",
                                "immediate",
                                "-w",
                                "-D",
                                data().toString()),
                        Duration.ofSeconds(30));
            }
        } catch (RuntimeException e) {
            try {
                kill();
            } catch (RuntimeException ignored) {
                // Best effort: nothing more to do about a server that will not die.
            }
        }
        deleteRecursively(dir);
    }

    @Override
    public String toString() {
        return "PostgreSQL on 127.0.0.1:" + port + (dir == null ? " (the machine's)" : " in " + dir);
    }

    // --- the installed binaries ------------------------------------------------------------------------

    /**
     * The directory of the installed server binaries: the newest {@code /usr/lib/postgresql/<version>/bin},
     * else the one holding {@code initdb} on the PATH.
     *
     * @throws IllegalStateException when there is none
     */
    public static Path binDir() {
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                Path newest = versions.filter(v -> Files.isExecutable(v.resolve("bin/initdb")))
                        .max(Comparator.comparingInt(PostgresServer::majorVersion))
                        .orElse(null);
                if (newest != null) {
                    return newest.resolve("bin");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(java.io.File.pathSeparator)) {
                Path initdb = Path.of(entry, "initdb");
                if (Files.isExecutable(initdb)) {
                    try {
                        return initdb.toRealPath().getParent();
                    } catch (IOException e) {
                        return initdb.getParent();
                    }
                }
            }
        }
        throw new IllegalStateException("no PostgreSQL server binaries (initdb, pg_ctl): install the postgresql"
                + " package, or start a server on 127.0.0.1:" + MACHINE_PORT);
    }

    private static int majorVersion(Path versionDir) {
        try {
            return Integer.parseInt(versionDir.getFileName().toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    // --- inside -----------------------------------------------------------------------------------------

    private Path data() {
        return dir.resolve("data");
    }

    private void requirePrivate() {
        if (dir == null) {
            throw new IllegalStateException("the machine's server is not this fixture's to change");
        }
    }

    private boolean answers() {
        try (Connection c = connect("postgres");
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT 1")) {
            return rs.next();
        } catch (SQLException e) {
            return false;
        }
    }

    private void configure(Map<String, String> settings) {
        StringBuilder conf = new StringBuilder("\n# added by the test fixture\n");
        conf.append("port = ").append(port).append('\n');
        conf.append("listen_addresses = '127.0.0.1'\n");
        conf.append("unix_socket_directories = '").append(dir).append("'\n");
        conf.append("fsync = off\n");
        conf.append("max_connections = 50\n");
        conf.append("shared_buffers = 16MB\n");
        settings.forEach((k, v) -> conf.append(k).append(" = ").append(v).append('\n'));
        try {
            Files.writeString(
                    data().resolve("postgresql.conf"),
                    conf.toString(),
                    StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void start() {
        runAsServerUser(
                List.of(
                        binDir().resolve("pg_ctl").toString(),
                        "start",
                        "-w",
                        "-t",
                        Long.toString(START_TIMEOUT.toSeconds()),
                        "-D",
                        data().toString(),
                        "-l",
                        dir.resolve("server.log").toString()),
                START_TIMEOUT.plusSeconds(5));
    }

    /** True while {@code h} runs: alive, and on Linux not a zombie (dead, waiting to be reaped). */
    private static boolean running(ProcessHandle h) {
        if (!h.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
            // "pid (command) state ...": the command may hold spaces and parentheses, the state follows the last ')'.
            String afterCommand = stat.substring(stat.lastIndexOf(')') + 1).strip();
            return !afterCommand.startsWith("Z") && !afterCommand.startsWith("X");
        } catch (IOException | RuntimeException e) {
            return h.isAlive();
        }
    }

    private long postmasterPid() {
        try {
            String first = Files.readAllLines(data().resolve("postmaster.pid"), StandardCharsets.UTF_8)
                    .get(0);
            return Long.parseLong(first.strip());
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("no postmaster.pid for " + this + ": " + e, e);
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Runs a server command, as the {@code postgres} user when this JVM runs as root. */
    private void runAsServerUser(List<String> command, Duration limit) {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of("runuser", "-u", USER, "--"));
        }
        full.addAll(command);
        Path out = dir.resolve("command-" + System.nanoTime() + ".out");
        try {
            Process p = new ProcessBuilder(full)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", full) + " took longer than " + limit + ": "
                        + Files.readString(out) + "\n" + log());
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", full) + " failed (exit " + p.exitValue() + "): "
                        + Files.readString(out) + "\n" + log());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** A new directory the server user owns, under the system's temporary directory. */
    private static Path newDirectory() {
        try {
            Path d = Files.createTempDirectory("fence-pg-");
            if (isRoot()) {
                UserPrincipal owner =
                        d.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(USER);
                Files.setOwner(d, owner);
            }
            return d;
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot make a directory for a private PostgreSQL server"
                            + (isRoot() ? " owned by the user '" + USER + "' (does it exist?)" : "") + ": " + e,
                    e);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteRecursively(Path root) {
        try (Stream<Path> all = Files.walk(root)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // Left for the system's temporary directory cleaner.
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // Same: a file that vanished under the walk, or one that could not be read.
        }
    }

    /** The lower-case value of a setting, as the server reports it. */
    public String setting(String database, String name) {
        String v = queryString(database, "SELECT current_setting('" + name.replace("'", "''") + "')");
        return v == null ? null : v.toLowerCase(Locale.ROOT);
    }
}
