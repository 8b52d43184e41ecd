package dev.fence.faults;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code redis-server} of a fault run: on 127.0.0.1, on a free port chosen by the OS (never the
 * machine's shared 6379), with its data in a directory of its own, so that a restart finds exactly what
 * this server persisted. Administered with {@code redis-cli}. Not thread-safe: the fault's orchestrator
 * drives it.
 */
final class RedisNode implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final Path server;
    private final Path cli;
    private final Path dir;
    private final int port;
    private final List<String> args;
    private Process process;

    private RedisNode(Path server, Path cli, Path dir, int port, List<String> args) {
        this.server = server;
        this.cli = cli;
        this.dir = dir;
        this.port = port;
        this.args = List.copyOf(args);
    }

    /**
     * A server (not yet started) with {@code args} ({@code --save ""}, {@code --appendonly yes}, ...) and
     * its data in {@code dir}, created.
     */
    static RedisNode create(Path server, Path cli, Path dir, List<String> args) throws IOException {
        Files.createDirectories(dir);
        int port;
        do {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
        } while (port == 6379);
        return new RedisNode(server, cli, dir, port, args);
    }

    int port() {
        return port;
    }

    /** The server's data directory (its {@code --dir}). */
    Path dir() {
        return dir;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** Starts the server (loading whatever its directory holds) and waits until it answers PING. */
    void start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("redis on port " + port + " is running");
        }
        List<String> command = new ArrayList<>(List.of(
                server.toString(),
                "--bind",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--dir",
                dir.toString(),
                "--protected-mode",
                "yes",
                "--daemonize",
                "no",
                // A replica that must resynchronise (after a failover) gets its data at once, not after 5 s.
                "--repl-diskless-sync-delay",
                "0"));
        command.addAll(args);
        process = Children.start(command, dir.resolve("redis.log"));
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("redis-server on port " + port + " exited at start (exit " + process.exitValue()
                        + "): " + lastLog());
            }
            if (pingOk()) {
                return;
            }
            sleep(50);
        }
        Children.kill(process);
        throw new IOException("redis-server on port " + port + " did not answer within " + START_TIMEOUT.toSeconds()
                + " s: " + lastLog());
    }

    /** {@code kill -9}: the server dies with whatever it had not persisted. */
    void kill() {
        Children.kill(process);
        process = null;
    }

    /** Kills the server if it runs, and starts it again from its directory, on the same port. */
    void restart() throws IOException {
        kill();
        start();
    }

    boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Runs {@code redis-cli -p <port> args...} and returns its reply, trimmed.
     *
     * @throws IOException when redis-cli fails or the server answers with an error
     */
    String cli(String... command) throws IOException {
        List<String> c = new ArrayList<>(List.of(cli.toString(), "-h", "127.0.0.1", "-p", Integer.toString(port)));
        c.addAll(List.of(command));
        Children.Outcome o = Children.run(c, null, 20);
        String out = o.out().trim();
        if (o.exit() != 0 || out.startsWith("ERR") || out.startsWith("Could not connect")) {
            throw new IOException("redis-cli " + String.join(" ", command) + " on port " + port + ": " + out);
        }
        return out;
    }

    /** {@code INFO <section>} as a map. */
    Map<String, String> info(String section) throws IOException {
        Map<String, String> m = new HashMap<>();
        for (String line : cli("INFO", section).split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                m.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return m;
    }

    /**
     * Waits until {@code INFO section} shows {@code key} with {@code value}.
     *
     * @throws IOException when it does not within {@code timeout}
     */
    void awaitInfo(String section, String key, String value, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String seen = null;
        while (System.nanoTime() < deadline) {
            seen = info(section).get(key);
            if (value.equals(seen)) {
                return;
            }
            sleep(50);
        }
        throw new IOException("redis on port " + port + ": " + key + " stayed " + seen + ", not " + value + ", for "
                + timeout.toSeconds() + " s");
    }

    /** The command that starts a {@code redis-cli} reading commands from its standard input, one per line. */
    List<String> feedCommand() {
        return List.of(cli.toString(), "-h", "127.0.0.1", "-p", Integer.toString(port));
    }

    private boolean pingOk() {
        try {
            return cli("PING").equals("PONG");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * What the server's log says it loaded at its last start ("DB loaded from ..."), or "nothing (empty)":
     * asking the server instead would race the clients, which write to it as soon as it answers.
     */
    String loaded() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("redis.log"));
            String found = null;
            for (String line : lines) {
                if (line.contains("Server initialized")) {
                    found = null;
                } else if (line.contains("DB loaded from") || line.contains("keys loaded")) {
                    int at = line.indexOf(" * ");
                    found = (found == null ? "" : found + "; ") + (at >= 0 ? line.substring(at + 3) : line).trim();
                }
            }
            return found == null ? "nothing (empty)" : found;
        } catch (IOException e) {
            return "(no log)";
        }
    }

    private String lastLog() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("redis.log"));
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        kill();
    }
}
