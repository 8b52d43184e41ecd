package dev.fence.git;

import dev.fence.core.ConfigException;
import dev.fence.core.Printable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Runs the real {@code git} found on the {@code PATH} of the environment it is given, with exactly that
 * environment less the variables that would point git at another repository (set when fence itself runs
 * inside a git hook).
 */
public final class Git {
    private static final Set<String> RELOCATING = Set.of(
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_COMMON_DIR",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_QUARANTINE_PATH",
            "GIT_NAMESPACE",
            "GIT_PREFIX",
            "GIT_CONFIG",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT");

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final String binary;
    private final Map<String, String> env;
    private final Duration timeout;

    /**
     * An environment in which git reads no system or user configuration and commits as {@code name
     * <email>}: {@code PATH} from {@code processEnv} (else {@code /usr/bin:/bin}), {@code HOME} = {@code
     * home}, {@code GIT_CONFIG_NOSYSTEM}, author and committer. Mutable, for callers to add to.
     */
    public static Map<String, String> isolatedEnv(
            Map<String, String> processEnv, Path home, String name, String email) {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", processEnv.getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", home.toString());
        env.put("GIT_CONFIG_NOSYSTEM", "1");
        env.put("GIT_AUTHOR_NAME", name);
        env.put("GIT_AUTHOR_EMAIL", email);
        env.put("GIT_COMMITTER_NAME", name);
        env.put("GIT_COMMITTER_EMAIL", email);
        return env;
    }

    /** @throws ConfigException when no {@code git} is on the environment's {@code PATH} */
    public Git(Map<String, String> env) {
        this(find(env), clean(env), TIMEOUT);
    }

    private Git(String binary, Map<String, String> env, Duration timeout) {
        this.binary = binary;
        this.env = Map.copyOf(env);
        this.timeout = timeout;
    }

    /**
     * The same git with {@code extra} added to its environment after the cleaning the constructor does:
     * for settings fence itself passes (for example {@code GIT_CONFIG_COUNT} entries, which keep a value
     * out of the process listing that a {@code -c} argument would put it in).
     */
    public Git withEnv(Map<String, String> extra) {
        Map<String, String> merged = new HashMap<>(env);
        merged.putAll(extra);
        return new Git(binary, merged, timeout);
    }

    /**
     * The same git without the variables {@code drop} names: for settings of the caller's environment
     * that must not reach one command (for example tracing, which would write what fence passes to a
     * file or to stderr).
     */
    public Git without(Predicate<String> drop) {
        Map<String, String> kept = new HashMap<>(env);
        kept.keySet().removeIf(drop);
        return new Git(binary, kept, timeout);
    }

    /** The same git, giving each run {@code limit} before it is stopped (default 60 s). */
    public Git withTimeout(Duration limit) {
        return new Git(binary, env, limit);
    }

    /** The outcome of one run. */
    public record Result(int exit, String stdout, String stderr) {}

    /** The absolute path of the git binary. */
    public String path() {
        return binary;
    }

    /** The environment git runs with. */
    public Map<String, String> env() {
        return env;
    }

    /** {@code env} without the variables that relocate git's repository. */
    public static Map<String, String> clean(Map<String, String> env) {
        Map<String, String> clean = new HashMap<>(env);
        clean.keySet()
                .removeIf(k ->
                        RELOCATING.contains(k) || k.startsWith("GIT_CONFIG_KEY_") || k.startsWith("GIT_CONFIG_VALUE_"));
        // fence runs unattended next to agents: a credential prompt would hang it, so git fails instead.
        clean.putIfAbsent("GIT_TERMINAL_PROMPT", "0");
        return clean;
    }

    /**
     * Runs {@code git args…} in {@code dir}.
     *
     * @throws ConfigException when an argument or {@code dir} is a name this JVM cannot hand to git as the
     *     bytes it stands for ({@link JvmCharset}): git would act on another name
     */
    public Result run(Path dir, String... args) {
        for (String arg : args) {
            requireCarried(arg, "argument");
        }
        requireCarried(dir.toString(), "directory");
        List<String> command = new ArrayList<>();
        command.add(binary);
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        // Callers read git's messages: in the C locale they are the same on every machine.
        pb.environment().put("LC_ALL", "C");
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(p.getErrorStream()));
            String out = drain(p.getInputStream());
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new ConfigException("git " + args[0] + " did not finish in " + timeout.toSeconds() + " s");
            }
            return new Result(p.exitValue(), out, err.join());
        } catch (IOException e) {
            throw new ConfigException("cannot run " + binary + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConfigException("interrupted while running git", e);
        }
    }

    /**
     * Runs {@code git args…} and returns its output without the final newline.
     *
     * @throws ConfigException when git exits non-zero
     */
    public String check(Path dir, String... args) {
        Result r = run(dir, args);
        if (r.exit() != 0) {
            throw new ConfigException("git " + String.join(" ", args) + " failed (exit " + r.exit() + "): "
                    + r.stderr().strip());
        }
        return chomp(r.stdout());
    }

    private static void requireCarried(String name, String what) {
        if (!JvmCharset.carries(name)) {
            throw new ConfigException("cannot give git the " + what + " '" + Printable.escape(name, 200)
                    + "' as the name it is: " + JvmCharset.remedy());
        }
    }

    public static String chomp(String s) {
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }

    private static String drain(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String find(Map<String, String> env) {
        String path = env.getOrDefault("PATH", "");
        for (String dir : path.split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, "git");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new ConfigException("git: not found on PATH (" + (path.isEmpty() ? "PATH is not set" : path)
                + "); fence runs git to read and configure repositories");
    }
}
