package dev.fence.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the benchmark's child processes with a fixed environment. */
final class Procs {
    private Procs() {}

    /** What a process said and how it ended. */
    record Outcome(int exit, String output, long nanos) {}

    /**
     * Runs {@code command} in {@code dir} with exactly {@code env}, standard input closed; output and
     * errors together. Times the whole process, start to exit.
     *
     * @throws IOException when it cannot start or runs past {@code timeoutSeconds}
     */
    static Outcome run(Path dir, Map<String, String> env, List<String> command, long timeoutSeconds)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        try {
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " ran past " + timeoutSeconds + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted", e);
        }
        long nanos = System.nanoTime() - start;
        return new Outcome(p.exitValue(), new String(out, StandardCharsets.UTF_8), nanos);
    }

    /**
     * As {@link #run}, failing unless the exit status is 0.
     *
     * @return the output, trimmed
     */
    static String check(Path dir, Map<String, String> env, List<String> command) throws IOException {
        Outcome o = run(dir, env, command, 120);
        if (o.exit() != 0) {
            throw new IOException(String.join(" ", command) + " failed (exit " + o.exit() + "): "
                    + o.output().trim());
        }
        return o.output().trim();
    }
}
