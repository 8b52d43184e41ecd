package dev.fence.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Git repositories for agent-side tests, made with the real {@code /usr/bin/git} under a controlled
 * environment: HOME in the temporary directory, no system config, fixed author and committer, and a
 * pusher name for plain-git hooks. Bare remotes start with one commit on {@code main}; clones and
 * commits are made the way an agent's harness would make them.
 *
 * <p>{@link #launcher()} writes a {@code fence} launcher that starts this test JVM's classes, for hooks
 * that run fence in a separate process (the remote's pre-receive hook, a clone's pre-push guard).
 */
public final class GitFixture {
    /** The pusher name plain-git hooks see. */
    public static final String PUSHER = "test-pusher";

    private final Path root;
    private final Map<String, String> env;
    private Path launcher;

    /** A fixture under {@code root} (a {@code @TempDir}). */
    public GitFixture(Path root) {
        this.root = root;
        Path home = root.resolve("home");
        try {
            Files.createDirectories(home);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> e = new HashMap<>(GitProcess.cleanEnv(home));
        e.put("REMOTE_USER", PUSHER);
        e.put("GIT_TERMINAL_PROMPT", "0");
        this.env = Map.copyOf(e);
    }

    /** The temporary root. */
    public Path root() {
        return root;
    }

    /** The environment every git (and in-process fence) run gets. */
    public Map<String, String> env() {
        return env;
    }

    /** The environment plus {@code extra}. */
    public Map<String, String> env(Map<String, String> extra) {
        Map<String, String> e = new HashMap<>(env);
        e.putAll(extra);
        return Map.copyOf(e);
    }

    /** A bare repository {@code <name>.git} whose {@code main} holds one commit (no hooks). */
    public Path bareWithMain(String name) {
        Path bare = root.resolve(name + ".git");
        git(root, "init", "-q", "--bare", "-b", "main", bare.toString());
        Path seed = root.resolve(name + "-seed");
        git(root, "init", "-q", "-b", "main", seed.toString());
        commit(seed, "README", "seed\n", "seed");
        git(seed, "push", "-q", bare.toString(), "main");
        return bare;
    }

    /** A clone of {@code bare} named {@code name}, with {@code origin} pointing at it. */
    public Path clone(Path bare, String name) {
        Path dir = root.resolve(name);
        git(root, "clone", "-q", bare.toString(), dir.toString());
        return dir;
    }

    /** Writes {@code file} in {@code clone}, commits it and returns the new HEAD. */
    public String commit(Path clone, String file, String content, String message) {
        try {
            Path p = clone.resolve(file);
            Files.createDirectories(p.getParent());
            Files.writeString(p, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        git(clone, "add", file);
        git(clone, "commit", "-q", "-m", message);
        return head(clone);
    }

    /** HEAD of a clone. */
    public String head(Path clone) {
        return git(clone, "rev-parse", "HEAD");
    }

    /** The tip of {@code ref} in a (bare) repository, or null when it does not exist. */
    public String tip(Path repo, String ref) {
        GitProcess.Result r = GitProcess.runAllowingFailure(repo, env, "rev-parse", "--verify", "-q", ref);
        return r.exit() == 0 ? r.stdout().strip() : null;
    }

    /** Runs git; fails the test on a non-zero exit. */
    public String git(Path dir, String... args) {
        return GitProcess.run(dir, env, args);
    }

    /** Runs git and returns what happened. */
    public GitProcess.Result gitAllowingFailure(Path dir, String... args) {
        return GitProcess.runAllowingFailure(dir, env, args);
    }

    /**
     * A {@code fence} launcher script that runs {@code dev.fence.cli.Main} from this JVM's class path
     * with start-up-friendly JVM flags; written once per fixture.
     */
    public synchronized Path launcher() {
        if (launcher != null) {
            return launcher;
        }
        launcher = TestLauncher.write(root.resolve("bin").resolve("fence"));
        return launcher;
    }
}
