package dev.fence.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code /usr/bin/git} for tests, with a clean, explicit environment. */
public final class GitProcess {
    /** The git binary the tests use. */
    public static final String GIT = "/usr/bin/git";

    private GitProcess() {}

    /** A minimal environment for git: no user or system config can leak into a test. */
    public static Map<String, String> cleanEnv(Path home) {
        return Map.of(
                "PATH", "/usr/bin:/bin",
                "HOME", home.toString(),
                "GIT_CONFIG_NOSYSTEM", "1",
                "GIT_AUTHOR_NAME", "Test",
                "GIT_AUTHOR_EMAIL", "test@example.invalid",
                "GIT_COMMITTER_NAME", "Test",
                "GIT_COMMITTER_EMAIL", "test@example.invalid",
                "LC_ALL", "C");
    }

    /** Runs git in {@code dir}; returns stdout with the trailing newline removed; fails on non-zero exit. */
    public static String run(Path dir, Map<String, String> env, String... args) {
        Result r = runAllowingFailure(dir, env, args);
        if (r.exit() != 0) {
            throw new AssertionError("git " + String.join(" ", args) + " exited " + r.exit() + ": " + r.stderr());
        }
        return r.stdout().strip();
    }

    /** The outcome of one git run. */
    public record Result(int exit, String stdout, String stderr) {}

    /** Runs git in {@code dir} and returns what happened. */
    public static Result runAllowingFailure(Path dir, Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>();
        command.add(GIT);
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            var out = p.getInputStream();
            var err = p.getErrorStream();
            // Small outputs only: read both after exit is safe up to the pipe buffer size.
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("git " + String.join(" ", args) + " timed out");
            }
            return new Result(
                    p.exitValue(),
                    new String(out.readAllBytes(), StandardCharsets.UTF_8),
                    new String(err.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
