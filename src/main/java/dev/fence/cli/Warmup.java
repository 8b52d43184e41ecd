package dev.fence.cli;

import dev.fence.bench.PrivateRedis;
import dev.fence.core.Grant;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.Resources;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A training run for class-data sharing: runs the pre-receive hook's real path (SQLite and Redis: the
 * server {@code FENCE_WARMUP_REDIS} names, else a private {@code redis-server} when one is on PATH) in a
 * throw-away repository set up as {@code fence install} does, so that a JVM started with {@code
 * -XX:DumpLoadedClassList} (JDK 17+, for a static archive) or {@code -XX:AOTCacheOutput} (JDK 25+) archives exactly the
 * classes a push needs, and as little else as it can: an AOT cache (JDK 25) loads and links every class it
 * holds when the JVM starts, so each class the training loads for its own set-up is paid on every push.
 * {@code bin/fence --build-archive} runs it (through {@link Main} with {@link #ARG}); nothing else should.
 */
public final class Warmup {
    private Warmup() {}

    /** The argument that makes {@link Main} run the training instead of a command. */
    static final String ARG = "--cds-training-run";

    static void run(Map<String, String> processEnv) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("fence-warmup");
        try {
            run(dir, processEnv);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void run(Path dir, Map<String, String> processEnv) throws IOException, InterruptedException {
        Path bare = dir.resolve("warmup.git");
        Map<String, String> env = new HashMap<>();
        env.put("PATH", processEnv.getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", dir.toString());
        env.put("GIT_CONFIG_NOSYSTEM", "1");
        env.put("GIT_AUTHOR_NAME", "fence");
        env.put("GIT_AUTHOR_EMAIL", "fence@localhost");
        env.put("GIT_COMMITTER_NAME", "fence");
        env.put("GIT_COMMITTER_EMAIL", "fence@localhost");
        git(env, dir, "init", "-q", "--bare", bare.toString());
        String emptyTree = git(env, bare, "hash-object", "-t", "tree", "-w", "--stdin");
        String first = git(env, bare, "commit-tree", emptyTree, "-m", "one");
        String second = git(env, bare, "commit-tree", emptyTree, "-p", first, "-m", "two");
        exercise(env, bare, "sqlite:" + dir.resolve("warmup.db"), first, second);
        String redis = processEnv.get("FENCE_WARMUP_REDIS");
        if (redis != null && !redis.isBlank()) {
            exercise(env, bare, redis, first, second);
            return;
        }
        // No Redis named: a private redis-server, when this machine has one, so that the archive holds the
        // Redis store's classes too.
        Path server = PrivateRedis.find(processEnv.get("PATH"), "redis-server");
        if (server != null) {
            try (PrivateRedis r = PrivateRedis.start(server)) {
                exercise(env, bare, r.url(), first, second);
            } catch (IOException e) {
                // The archive then covers SQLite only; Redis hooks still work, a little slower.
            }
        }
    }

    private static void exercise(Map<String, String> env, Path bare, String store, String first, String second)
            throws IOException {
        String repoId = "warmup-" + System.nanoTime();
        String resource = Resources.forRef(repoId, "refs/heads/main");
        Grant g;
        // The grant through a hook's single connection, not a pool: the archive should hold what a push
        // loads and little else, since an AOT cache loads every class it holds when the JVM starts.
        try (LeaseStore s = Stores.open(store, StoreOptions.defaults().withSingleConnection(true))) {
            var outcome =
                    new LeaseService(s, Clock.systemUTC()).acquire(resource, "warmup", Duration.ofSeconds(30), null);
            g = ((LeaseService.AcquireOutcome.Acquired) outcome).grant();
        }
        // As 'fence install' sets a repository up: the store in its fence.conf, the repo id read from its
        // git config, the pusher from USER.
        Files.writeString(bare.resolve("fence.conf"), "store = " + store + "\n");
        try {
            git(env, bare, "config", "fence.repoId", repoId);
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
        Map<String, String> hookEnv = new HashMap<>(env);
        hookEnv.put("GIT_DIR", ".");
        hookEnv.put("USER", "warmup");
        hookEnv.put("GIT_PUSH_OPTION_COUNT", "2");
        hookEnv.put("GIT_PUSH_OPTION_0", "fence=" + g.token());
        hookEnv.put("GIT_PUSH_OPTION_1", "fence-proof=" + g.proof());
        String zero = "0".repeat(40);
        hook(hookEnv, bare, zero + " " + first + " refs/heads/main\n");
        hook(hookEnv, bare, first + " " + second + " refs/heads/main\n");
        hookEnv.put("GIT_PUSH_OPTION_0", "fence=" + (g.token() - 1));
        hook(hookEnv, bare, second + " " + first + " refs/heads/main\n");
    }

    private static void hook(Map<String, String> env, Path bare, String stdin) {
        Context ctx = new Context(
                new ProcessStreams.In(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8))),
                new ProcessStreams.Out(java.io.OutputStream.nullOutputStream()),
                new ProcessStreams.Out(java.io.OutputStream.nullOutputStream()),
                java.util.Collections.unmodifiableMap(env),
                Clock.systemUTC(),
                bare);
        Main.run(ctx, "hook", "pre-receive");
    }

    private static String git(Map<String, String> env, Path dir, String... args)
            throws IOException, InterruptedException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "git";
        System.arraycopy(args, 0, cmd, 1, args.length);
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.waitFor() != 0) {
            throw new IOException("git " + args[0] + " failed: " + out);
        }
        return out;
    }
}
