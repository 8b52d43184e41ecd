package dev.fence.faults;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * One PostgreSQL server of a fault run, made from the installed binaries ({@code initdb}, {@code pg_ctl},
 * {@code pg_basebackup}) in a directory of its own, listening on 127.0.0.1 on a free port (never the
 * machine's 5432), with trust authentication for the user {@code postgres}. {@code initdb} refuses to run
 * as root, so as root every server command runs as the {@code postgres} user through {@code runuser}.
 * The binaries are those of the {@code initdb} on {@code PATH}. Runs with {@code fsync = off}: the harness kills processes, never the machine, and the kernel keeps what
 * a killed process wrote. A JVM shutdown hook kills a server still running. Not thread-safe: the fault's
 * orchestrator drives it.
 */
final class PrivatePostgres implements AutoCloseable {
    /** The role the servers are made with, and the operating-system user they run as when this JVM is root. */
    static final String USER = "postgres";

    private static final List<String> BINARIES = List.of("initdb", "pg_ctl", "pg_basebackup", "postgres");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final Path bin;
    private final Path runuser;
    private final Path dir;
    private final int port;
    private final Runnable stopper = this::killQuietly;

    private PrivatePostgres(Path bin, Path runuser, Path dir, int port) {
        this.bin = bin;
        this.runuser = runuser;
        this.dir = dir;
        this.port = port;
    }

    /**
     * The directory holding the server binaries: the one {@code initdb} on {@code path} resolves to (through
     * symbolic links), or null when there is no {@code initdb} on it.
     */
    static Path findBin(String path) {
        Path initdb = Children.find(path, "initdb");
        if (initdb == null) {
            return null;
        }
        try {
            return initdb.toRealPath().getParent();
        } catch (IOException e) {
            return initdb.getParent();
        }
    }

    /**
     * Why servers cannot be made here, or null when they can.
     *
     * @param bin from {@link #findBin}, or null
     * @param runuser {@code runuser} on the PATH, or null
     */
    static String cannotRun(Path bin, Path runuser) {
        if (bin == null) {
            return "initdb is not on PATH (the PostgreSQL server binaries; Debian keeps them in"
                    + " /usr/lib/postgresql/<major>/bin)";
        }
        for (String b : BINARIES) {
            if (!Files.isExecutable(bin.resolve(b))) {
                return b + " is not next to initdb in " + bin;
            }
        }
        if (isRoot()) {
            if (runuser == null) {
                return "running as root (initdb refuses it) and runuser is not on PATH";
            }
            try {
                bin.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(USER);
            } catch (IOException e) {
                return "running as root (initdb refuses it) and there is no user '" + USER + "' to run as";
            }
        }
        return null;
    }

    /**
     * A new server (initialised, configured with {@code settings}, not started) in {@code dir}.
     *
     * @param settings {@code postgresql.conf} lines, values as the file spells them
     */
    static PrivatePostgres init(Path bin, Path runuser, Path dir, Map<String, String> settings) throws IOException {
        PrivatePostgres p = create(bin, runuser, dir);
        p.asServerUser(List.of(
                bin.resolve("initdb").toString(),
                "-D",
                p.data().toString(),
                "-U",
                USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync"));
        p.configure(settings);
        return p;
    }

    /**
     * A new standby of {@code primary} (running) in {@code dir}: {@code pg_basebackup -R} streams the
     * primary's data and writes the settings that make it follow the primary; not started.
     */
    static PrivatePostgres standbyOf(PrivatePostgres primary, Path dir) throws IOException {
        PrivatePostgres p = create(primary.bin, primary.runuser, dir);
        p.asServerUser(List.of(
                primary.bin.resolve("pg_basebackup").toString(),
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(primary.port),
                "-U",
                USER,
                "-D",
                p.data().toString(),
                "-R",
                "-X",
                "stream",
                "--checkpoint=fast",
                "--no-sync"));
        p.configure(Map.of());
        return p;
    }

    private static PrivatePostgres create(Path bin, Path runuser, Path dir) throws IOException {
        Files.createDirectories(dir);
        if (isRoot()) {
            UserPrincipal owner =
                    dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(USER);
            Files.setOwner(dir, owner);
            // The server user must reach its directory through the run's private ones: search, not read.
            for (Path p = dir.toAbsolutePath().getParent(); p != null; p = p.getParent()) {
                Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
                if (!perms.contains(PosixFilePermission.OTHERS_EXECUTE)) {
                    perms.add(PosixFilePermission.OTHERS_EXECUTE);
                    Files.setPosixFilePermissions(p, perms);
                }
            }
        }
        int port;
        do {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
        } while (port == 5432);
        return new PrivatePostgres(bin, runuser, dir, port);
    }

    int port() {
        return port;
    }

    /** {@code postgresql://postgres@127.0.0.1:<port>/<database>}, a fence store URL. */
    String url(String database) {
        return "postgresql://" + USER + "@127.0.0.1:" + port + "/" + database;
    }

    /** {@code pg_ctl start -w}: returns once the server accepts connections. */
    void start() throws IOException {
        Children.stopAtExit(stopper);
        asServerUser(List.of(
                bin.resolve("pg_ctl").toString(),
                "start",
                "-w",
                "-t",
                Long.toString(TIMEOUT.toSeconds()),
                "-D",
                data().toString(),
                "-l",
                dir.resolve("server.log").toString()));
    }

    /** {@code pg_ctl promote -w}: returns once this standby takes writes. */
    void promote() throws IOException {
        asServerUser(List.of(
                bin.resolve("pg_ctl").toString(),
                "promote",
                "-w",
                "-t",
                Long.toString(TIMEOUT.toSeconds()),
                "-D",
                data().toString()));
    }

    /**
     * Kills the server as a crash of its machine would: SIGKILL to the postmaster and every process it
     * started, at once, and waits until they are gone.
     */
    void kill() throws IOException {
        Children.forget(stopper);
        Path pidFile = data().resolve("postmaster.pid");
        if (!Files.exists(pidFile)) {
            return;
        }
        long pid;
        try {
            pid = Long.parseLong(
                    Files.readAllLines(pidFile, StandardCharsets.UTF_8).get(0).strip());
        } catch (RuntimeException e) {
            throw new IOException("unreadable " + pidFile + ": " + e.getMessage(), e);
        }
        ProcessHandle pm = ProcessHandle.of(pid).orElse(null);
        if (pm == null) {
            return;
        }
        List<ProcessHandle> all = new ArrayList<>(pm.descendants().toList());
        all.add(0, pm);
        all.forEach(ProcessHandle::destroyForcibly);
        // Polled: a killed process that is not this JVM's child stays a zombie until init reaps it.
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (all.stream().anyMatch(PrivatePostgres::running)) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the processes of PostgreSQL on port " + port + " did not die");
            }
            RedisNode.sleep(2);
        }
    }

    /** Runs {@code sql} as the superuser in {@code database}. */
    void execute(String database, String sql) throws IOException {
        try (Connection c = connect(database);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IOException("PostgreSQL on port " + port + ": " + sql + ": " + e.getMessage(), e);
        }
    }

    /** The first column of the first row of {@code sql}, as text (null for no row). */
    String query(String database, String sql) throws IOException {
        try (Connection c = connect(database);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IOException("PostgreSQL on port " + port + ": " + sql + ": " + e.getMessage(), e);
        }
    }

    /** The rows of {@code sql}: first column to second, as text. */
    Map<String, String> rows(String database, String sql) throws IOException {
        Map<String, String> out = new HashMap<>();
        try (Connection c = connect(database);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getString(2));
            }
            return out;
        } catch (SQLException e) {
            throw new IOException("PostgreSQL on port " + port + ": " + sql + ": " + e.getMessage(), e);
        }
    }

    /**
     * Waits until {@code sql} answers {@code expected}.
     *
     * @throws IOException when it does not within {@code timeout}
     */
    void await(String database, String sql, String expected, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String seen = null;
        while (System.nanoTime() < deadline) {
            seen = query(database, sql);
            if (expected.equals(seen)) {
                return;
            }
            RedisNode.sleep(20);
        }
        throw new IOException("PostgreSQL on port " + port + ": " + sql + " answered " + seen + ", not " + expected
                + ", for " + timeout.toSeconds() + " s");
    }

    /** Stops the server ({@code pg_ctl stop -m immediate}, else a kill); its directory stays. */
    @Override
    public void close() {
        if (!Files.exists(data().resolve("postmaster.pid"))) {
            Children.forget(stopper);
            return;
        }
        try {
            asServerUser(List.of(
                    bin.resolve("pg_ctl").toString(), "stop", "-m", "immediate", "-w", "-D", data().toString()));
            Children.forget(stopper);
        } catch (IOException e) {
            killQuietly();
        }
    }

    private void killQuietly() {
        try {
            kill();
        } catch (IOException | RuntimeException e) {
            // best effort: the JVM is ending or the server is already gone
        }
    }

    private Connection connect(String database) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", USER);
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "30");
        p.setProperty("ApplicationName", "fence-faults");
        // Through DriverManager: only the PostgreSQL store names the driver's classes.
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/" + database, p);
    }

    private Path data() {
        return dir.resolve("data");
    }

    private void configure(Map<String, String> settings) throws IOException {
        StringBuilder conf = new StringBuilder("\n# fence faults\n");
        conf.append("port = ").append(port).append('\n');
        conf.append("listen_addresses = '127.0.0.1'\n");
        conf.append("unix_socket_directories = '").append(dir).append("'\n");
        conf.append("fsync = off\n");
        conf.append("max_connections = 100\n");
        conf.append("shared_buffers = 16MB\n");
        settings.forEach((k, v) -> conf.append(k).append(" = ").append(v).append('\n'));
        Files.writeString(
                data().resolve("postgresql.conf"), conf.toString(), StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    }

    private void asServerUser(List<String> command) throws IOException {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of(runuser.toString(), "-u", USER, "--"));
        }
        full.addAll(command);
        Children.Outcome o = Children.run(full, null, dir, TIMEOUT.toSeconds() + 5);
        if (o.exit() != 0) {
            throw new IOException(Path.of(command.get(0)).getFileName() + " " + command.get(1) + " failed (exit "
                    + o.exit() + "): " + o.out().strip() + lastLog());
        }
    }

    private String lastLog() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("server.log"));
            return " | log: " + String.join(" | ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    /** True while {@code h} runs: alive, and on Linux not a zombie. */
    private static boolean running(ProcessHandle h) {
        if (!h.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
            String state = stat.substring(stat.lastIndexOf(')') + 1).strip();
            return !state.startsWith("Z") && !state.startsWith("X");
        } catch (IOException | RuntimeException e) {
            return h.isAlive();
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }
}
