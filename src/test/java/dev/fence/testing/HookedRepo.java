package dev.fence.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.git.Git;
import dev.fence.install.BareRepoInstaller;
import dev.fence.install.InstallResult;
import dev.fence.install.Launch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A bare repository with fence's real hooks installed (by the real installer), and clones that commit
 * and push with the real {@code git} binary. The hooks run fence from this test's classpath through a
 * small launcher script, so no jar needs to be built first.
 */
public final class HookedRepo {
    private final Path root;
    private final Path bare;
    private final Map<String, String> baseEnv;

    /** A git invocation's outcome. */
    public record Run(int exit, String out, String err) {
        public boolean ok() {
            return exit == 0;
        }

        /** Asserts that git succeeded. */
        public Run check() {
            return checked(this);
        }

        /** The hook's lines as the pusher sees them, without git's {@code remote: } prefix. */
        public List<String> remoteLines() {
            List<String> lines = new ArrayList<>();
            for (String l : err.split("\n")) {
                if (l.startsWith("remote: ")) {
                    lines.add(l.substring("remote: ".length()).stripTrailing());
                }
            }
            return lines;
        }
    }

    private HookedRepo(Path root, Path bare, Map<String, String> baseEnv) {
        this.root = root;
        this.bare = bare;
        this.baseEnv = baseEnv;
    }

    /**
     * Creates {@code <root>/<name>.git}, installs fence's hooks with store {@code storeUrl}, and returns it.
     * With {@code storeUrl} null, creates a bare repository without any fence hook (a stand-in for a host
     * with no custom hooks).
     */
    public static HookedRepo create(Path root, String name, String storeUrl) {
        Map<String, String> env = gitEnv(root);
        Path bare = root.resolve(name + ".git");
        git(env, root, "init", "-q", "--bare", "-b", "main", bare.toString()).check();
        if (storeUrl != null) {
            InstallResult r = new BareRepoInstaller(env)
                    .install(new BareRepoInstaller.Request(
                            bare,
                            name,
                            storeUrl,
                            new Launch.Launcher(launcher(root).toString()),
                            false,
                            true));
            assertTrue(r instanceof InstallResult.Installed, "install: " + r);
        }
        return new HookedRepo(root, bare, env);
    }

    /** An environment for git that ignores the machine's and the user's git configuration. */
    public static Map<String, String> gitEnv(Path root) {
        Map<String, String> env = Git.isolatedEnv(System.getenv(), root, "Test", "test@example.invalid");
        env.put("LANG", "C");
        return env;
    }

    /** A launcher script that runs fence's Main from this JVM's classpath. */
    public static Path launcher(Path root) {
        return TestLauncher.write(root.resolve("fence-under-test"));
    }

    public Path bare() {
        return bare;
    }

    /**
     * Appends {@code key = value} lines to the repository's {@code fence.conf}, where the installed hook
     * reads its settings (never from the pusher's environment).
     */
    public HookedRepo configure(String... lines) {
        Path conf = bare.resolve("fence.conf");
        try {
            Files.writeString(
                    conf,
                    String.join("\n", lines) + "\n",
                    java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    public String url() {
        return bare.toUri().toString();
    }

    /**
     * Starts the JVM of this repository's pre-receive hook with {@code JAVA_TOOL_OPTIONS} set to {@code
     * options}, as {@link #jvmOptions(Path, String)} writes it.
     */
    public HookedRepo hookJvmOptions(String options) {
        jvmOptions(bare.resolve("hooks/pre-receive"), options);
        return this;
    }

    /**
     * Writes {@code JAVA_TOOL_OPTIONS=options} into the installed hook script {@code hook}, right after the
     * line that unsets the JVM variables of the environment it runs in: a pusher's environment must not
     * choose the JVM's options, so a test that needs them (a class-load log) edits the script, as only the
     * hook's owner could.
     */
    public static void jvmOptions(Path hook, String options) {
        String unset = "unset JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS FENCE_JAVA_OPTS\n";
        assertTrue(options.indexOf('\'') < 0, options);
        try {
            String script = Files.readString(hook).replaceAll("(?m)^JAVA_TOOL_OPTIONS=.*\n", "");
            assertTrue(script.contains(unset), script);
            Files.writeString(
                    hook,
                    script.replace(unset, unset + "JAVA_TOOL_OPTIONS='" + options + "'; export JAVA_TOOL_OPTIONS\n"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The ref's current id in the bare repository, or null when it does not exist. */
    public String tip(String ref) {
        Run r = git(baseEnv, bare, "rev-parse", "--verify", "-q", ref);
        return r.ok() ? r.out().trim() : null;
    }

    /** A new clone for an agent or a person named {@code who}; pushes as pusher {@code who}. */
    public Clone clone(String who) {
        Path dir = root.resolve("clone-" + who + "-" + System.nanoTime());
        git(baseEnv, root, "clone", "-q", url(), dir.toString()).check();
        Map<String, String> env = new HashMap<>(baseEnv);
        env.put("REMOTE_USER", who);
        return new Clone(dir, env);
    }

    /** A working clone. */
    public static final class Clone {
        private final Path dir;
        private final Map<String, String> env;

        Clone(Path dir, Map<String, String> env) {
            this.dir = dir;
            this.env = env;
        }

        public Path dir() {
            return dir;
        }

        /** Sets an environment variable for this clone's pushes (e.g. host identity variables). */
        public Clone env(String name, String value) {
            if (value == null) {
                env.remove(name);
            } else {
                env.put(name, value);
            }
            return this;
        }

        /** Commits a new file and returns the new HEAD. */
        public String commit(String message) {
            try {
                Files.writeString(dir.resolve("f-" + System.nanoTime() + ".txt"), message + "\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            HookedRepo.git(env, dir, "add", "-A").check();
            HookedRepo.git(env, dir, "commit", "-q", "-m", message).check();
            return head();
        }

        public String head() {
            return HookedRepo.git(env, dir, "rev-parse", "HEAD").check().out().trim();
        }

        /** Resets the branch to {@code commit} (to rewrite history). */
        public Clone reset(String commit) {
            HookedRepo.git(env, dir, "reset", "-q", "--hard", commit).check();
            return this;
        }

        /** Fetches and checks out origin's {@code branch}. */
        public Clone sync(String branch) {
            HookedRepo.git(env, dir, "fetch", "-q", "origin").check();
            HookedRepo.git(env, dir, "checkout", "-q", "-B", branch, "origin/" + branch)
                    .check();
            return this;
        }

        /** Runs {@code git push origin <args>} with {@code -o} options. */
        public Run push(List<String> options, String... args) {
            List<String> cmd = new ArrayList<>(List.of("push", "--porcelain"));
            for (String o : options) {
                cmd.add("-o");
                cmd.add(o);
            }
            cmd.add("origin");
            cmd.addAll(List.of(args));
            return HookedRepo.git(env, dir, cmd.toArray(String[]::new));
        }

        /** Runs any git command in this clone. */
        public Run git(String... args) {
            return HookedRepo.git(env, dir, args);
        }
    }

    /** Runs git with exactly {@code env} in {@code dir}. */
    public static Run git(Map<String, String> env, Path dir, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add("git");
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        try {
            Path out = Files.createTempFile("git-out", ".txt");
            Path err = Files.createTempFile("git-err", ".txt");
            pb.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
            Process p = pb.start();
            p.getOutputStream().close();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("git " + args[0] + " timed out");
            }
            Run r = new Run(p.exitValue(), Files.readString(out), Files.readString(err));
            Files.delete(out);
            Files.delete(err);
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Asserts success and returns the run. */
    static Run checked(Run r) {
        assertEquals(0, r.exit(), () -> "git failed: " + r.err());
        return r;
    }
}
