package dev.fence.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private {@code redis-server} child process on a free loopback port, without persistence, for tests.
 * Never the machine's shared Redis: the port is an ephemeral one chosen by the OS, and the data lives in
 * a temporary directory deleted on {@link #close()}.
 *
 * <p>A JVM shutdown hook kills every server still running, so an aborted test run leaves none behind.
 * Not thread-safe: one test class drives one server.
 */
public final class RedisServer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);
    private static final Set<RedisServer> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(RedisServer::close), "redis-cleanup"));
    }

    private final String executable;
    private final int port;
    private final Path dir;
    private final List<String> extraArgs;
    private Process process;

    private RedisServer(String executable, int port, Path dir, List<String> extraArgs) {
        this.executable = executable;
        this.port = port;
        this.dir = dir;
        this.extraArgs = List.copyOf(extraArgs);
    }

    /** The {@code redis-server} on the PATH, or null when there is none. */
    public static String findExecutable() {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String entry : path.split(File.pathSeparator)) {
            Path candidate = Path.of(entry, "redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return null;
    }

    /**
     * Starts a server and waits until it answers PING.
     *
     * @param extraArgs further {@code redis-server} options, e.g. {@code "--requirepass", "secret"}
     * @throws IllegalStateException when there is no {@code redis-server} or it does not come up
     */
    public static RedisServer start(String... extraArgs) {
        String executable = findExecutable();
        if (executable == null) {
            throw new IllegalStateException("no redis-server on the PATH");
        }
        try {
            RedisServer server = new RedisServer(
                    executable, freePort(), Files.createTempDirectory("fence-redis-"), List.of(extraArgs));
            RUNNING.add(server);
            server.launch();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** True while the process is alive (it may be frozen). */
    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Kills the process; its data is gone. {@link #restart()} reuses the port, which another process could
     * take meanwhile; tests accept that small risk.
     */
    public void stop() {
        if (process != null) {
            thaw();
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }

    /** Starts the server again on the same port, with no data: a restart without persistence. */
    public void restart() {
        stop();
        try {
            Files.deleteIfExists(dir.resolve("dump.rdb"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        launch();
    }

    /**
     * Snapshots the data ({@code SAVE}), kills the process and starts it again from the snapshot: a restart
     * that kept everything, as a server with persistence does. The new process has a new run id.
     */
    public void restartKeepingData() {
        command("SAVE");
        crashAndRestart();
    }

    /**
     * Kills the process (kill -9) and starts it again from its last snapshot, if any ({@code SAVE}): what a
     * Redis with snapshot-only persistence does after a crash, losing every write since that snapshot.
     */
    public void crashAndRestart() {
        stop();
        launch();
    }

    /** Stops the process with SIGSTOP: it keeps its port and accepts connections but never answers. */
    public void freeze() {
        signal("STOP");
    }

    /** Resumes a {@link #freeze() frozen} process. */
    public void thaw() {
        signal("CONT");
    }

    /** Sends one command with arguments and returns the raw RESP reply's first line. */
    public String command(String... args) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            socket.setSoTimeout(5000);
            StringBuilder request = new StringBuilder("*" + args.length + "\r\n");
            for (String arg : args) {
                request.append('$')
                        .append(arg.getBytes(StandardCharsets.UTF_8).length)
                        .append("\r\n")
                        .append(arg)
                        .append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Kills the process and deletes its directory. Never throws. */
    @Override
    public void close() {
        try {
            stop();
        } catch (RuntimeException e) {
            // Best effort: the JVM may be shutting down.
        }
        RUNNING.remove(this);
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // A leftover temp directory is harmless.
        }
    }

    private void launch() {
        List<String> command = new ArrayList<>(List.of(
                executable,
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toString(),
                "--daemonize",
                "no"));
        command.addAll(extraArgs);
        try {
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("redis.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited at start: " + log());
            }
            try {
                String reply = command("PING");
                if (reply.equals("+PONG") || reply.startsWith("-NOAUTH")) {
                    return;
                }
            } catch (UncheckedIOException e) {
                // Not listening yet.
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        stop();
        throw new IllegalStateException("redis-server did not answer PING within " + START_TIMEOUT + ": " + log());
    }

    private void signal(String signal) {
        if (process == null || !process.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
            kill.waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("redis.log"));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = socket.getLocalPort();
            if (port == 6379) {
                // The machine's shared Redis lives there; never even risk pointing a test at it.
                return freePort();
            }
            return port;
        }
    }
}
