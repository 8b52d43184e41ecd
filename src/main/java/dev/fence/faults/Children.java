package dev.fence.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The processes the harness starts: each is registered until it ends, and a JVM shutdown hook kills every
 * one still running, so that an interrupted run (Ctrl-C, a failed test) leaves no Redis behind.
 */
final class Children {
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();
    private static final Set<Path> DIRECTORIES = ConcurrentHashMap.newKeySet();
    private static final Set<Runnable> STOPPERS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(Children::cleanUp, "fence-faults-cleanup"));
    }

    /** Kills what still runs, then deletes the directories registered for deletion. */
    private static void cleanUp() {
        // Servers that daemonise (PostgreSQL's postmaster) are no process of this JVM's: each stops itself.
        for (Runnable stop : STOPPERS) {
            try {
                stop.run();
            } catch (RuntimeException e) {
                // best effort
            }
        }
        RUNNING.forEach(Process::destroyForcibly);
        for (Process p : RUNNING) {
            try {
                p.waitFor(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        DIRECTORIES.forEach(Children::deleteTree);
        // A git push that was under way when the JVM was told to end may still write a file or two.
        try {
            Thread.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        DIRECTORIES.forEach(Children::deleteTree);
    }

    /** Runs {@code stop} if the JVM ends before {@link #forget} is called with it. */
    static void stopAtExit(Runnable stop) {
        STOPPERS.add(stop);
    }

    static void forget(Runnable stop) {
        STOPPERS.remove(stop);
    }

    /** Deletes {@code dir} if the JVM ends before {@link #deleteNow} is called. */
    static void deleteOnExit(Path dir) {
        DIRECTORIES.add(dir);
    }

    /** Deletes {@code dir} now (best effort). */
    static void deleteNow(Path dir) {
        DIRECTORIES.remove(dir);
        deleteTree(dir);
    }

    /** Keeps {@code dir} after all. */
    static void keep(Path dir) {
        DIRECTORIES.remove(dir);
    }

    private static void deleteTree(Path dir) {
        try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        } catch (IOException | java.io.UncheckedIOException e) {
            // best effort
        }
    }

    private Children() {}

    /** The outcome of a short command. */
    record Outcome(int exit, String out) {}

    /** Starts a long-running process (a server), registered until {@link #kill}; output goes to {@code log}. */
    static Process start(List<String> command, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Process p = pb.start();
        RUNNING.add(p);
        p.onExit().thenRun(() -> RUNNING.remove(p));
        return p;
    }

    /** Starts a process whose standard input the caller writes; output discarded. */
    static Process startFed(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        RUNNING.add(p);
        p.onExit().thenRun(() -> RUNNING.remove(p));
        return p;
    }

    /** SIGKILL, and waits (bounded) for the process to be gone. */
    static void kill(Process p) {
        if (p == null) {
            return;
        }
        p.destroyForcibly();
        try {
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        RUNNING.remove(p);
    }

    /**
     * Runs a short command with {@code env} (null: inherit), stdin closed, output and errors together.
     *
     * @throws IOException when it cannot start or runs past {@code timeoutSeconds} (it is then killed)
     */
    static Outcome run(List<String> command, Map<String, String> env, long timeoutSeconds) throws IOException {
        return run(command, env, null, timeoutSeconds);
    }

    /** As {@link #run(List, Map, long)}, in {@code directory} (null: this process's). */
    static Outcome run(List<String> command, Map<String, String> env, Path directory, long timeoutSeconds)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        if (directory != null) {
            pb.directory(directory.toFile());
        }
        if (env != null) {
            pb.environment().clear();
            pb.environment().putAll(env);
        }
        Path out = Files.createTempFile("fence-faults-", ".out");
        try {
            pb.redirectOutput(out.toFile());
            Process p = pb.start();
            RUNNING.add(p);
            try {
                p.getOutputStream().close();
                if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    kill(p);
                    throw new IOException(String.join(" ", command) + " ran past " + timeoutSeconds + " s");
                }
            } catch (InterruptedException e) {
                kill(p);
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while running " + command.get(0), e);
            } finally {
                RUNNING.remove(p);
            }
            return new Outcome(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** The executable {@code name} on {@code path} (a PATH value), or null. */
    static Path find(String path, String name) {
        if (path == null) {
            return null;
        }
        for (String dir : path.split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
