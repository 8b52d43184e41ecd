package dev.fence.client;

import dev.fence.core.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A tool's subprocess with fence's streams: each of stdin, stdout and stderr is either the real process
 * stream (inherited, byte for byte) or one of the given streams, pumped by a thread.
 */
final class ChildProcess {
    /**
     * Where the child's streams go.
     *
     * @param in read for the child's stdin when {@code inheritIn} is false
     * @param out receives the child's stdout (decoded as UTF-8) when {@code inheritOut} is false
     * @param err receives the child's stderr (decoded as UTF-8) when {@code inheritErr} is false
     */
    record Io(
            InputStream in,
            boolean inheritIn,
            PrintWriter out,
            boolean inheritOut,
            PrintWriter err,
            boolean inheritErr) {}

    private final Process process;
    private final List<Thread> outputPumps;

    private ChildProcess(Process process, List<Thread> outputPumps) {
        this.process = process;
        this.outputPumps = outputPumps;
    }

    /**
     * Starts {@code command} in {@code cwd} with exactly {@code env}.
     *
     * @throws ConfigException when it cannot be started (no such program, not executable)
     */
    static ChildProcess start(List<String> command, Path cwd, Map<String, String> env, Io io) {
        ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.redirectInput(io.inheritIn() ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.PIPE);
        pb.redirectOutput(io.inheritOut() ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.PIPE);
        pb.redirectError(io.inheritErr() ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.PIPE);
        // What fence printed so far must come before the child's output.
        io.out().flush();
        io.err().flush();
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new ConfigException("cannot start " + command.get(0) + ": " + e.getMessage(), e);
        }
        List<Thread> pumps = new ArrayList<>();
        if (!io.inheritOut()) {
            pumps.add(pump("fence-exec-stdout", p.getInputStream(), io.out()));
        }
        if (!io.inheritErr()) {
            pumps.add(pump("fence-exec-stderr", p.getErrorStream(), io.err()));
        }
        if (!io.inheritIn()) {
            // Not joined: the source may never end; the thread stops when the child's stdin closes.
            Thread t = new Thread(() -> copyIn(io.in(), p.getOutputStream()), "fence-exec-stdin");
            t.setDaemon(true);
            t.start();
        }
        return new ChildProcess(p, pumps);
    }

    /** True while the child runs. */
    boolean isAlive() {
        return process.isAlive();
    }

    /** Stops the child: SIGTERM, then SIGKILL after {@code graceMillis}. */
    void kill(long graceMillis) {
        process.destroy();
        try {
            if (!process.waitFor(graceMillis, TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** Waits for the child and its output, and returns its exit code (128 + n for a signal n). */
    int waitFor() throws InterruptedException {
        int code = process.waitFor();
        for (Thread t : outputPumps) {
            t.join();
        }
        return code;
    }

    private static Thread pump(String name, InputStream from, PrintWriter to) {
        Thread t = new Thread(
                () -> {
                    try (Reader r = new InputStreamReader(from, StandardCharsets.UTF_8)) {
                        char[] buf = new char[8192];
                        int n;
                        while ((n = r.read(buf)) >= 0) {
                            to.write(buf, 0, n);
                            to.flush();
                        }
                    } catch (IOException e) {
                        // The child went away; what it wrote so far has been passed on.
                    }
                },
                name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void copyIn(InputStream from, OutputStream to) {
        try (to) {
            byte[] buf = new byte[8192];
            int n;
            while ((n = from.read(buf)) >= 0) {
                to.write(buf, 0, n);
                to.flush();
            }
        } catch (IOException e) {
            // The child closed its stdin or exited.
        }
    }
}
