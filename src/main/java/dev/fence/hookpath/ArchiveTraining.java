package dev.fence.hookpath;

import dev.fence.bench.PrivateRedis;
import dev.fence.core.Grant;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.Resources;
import dev.fence.git.Git;
import dev.fence.hook.HookConfig;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The training run for class-data sharing, in two processes. {@code bin/fence --build-archive} starts an
 * ordinary JVM with {@link #ARG}: it sets up throw-away repositories as {@code fence install} does, grants
 * their leases (in SQLite, and in Redis: the server {@code FENCE_WARMUP_REDIS} names, else a private
 * {@code redis-server} when one is on PATH), writes the pushes a hook will judge into a plan, and runs
 * the recording JVM the launcher gave it (with {@code -XX:DumpLoadedClassList} on JDK 17-24, {@code
 * -XX:AOTCacheOutput} on JDK 25+) on that plan ({@link #RUN_ARG}). The recording JVM runs the hooks'
 * real paths (pre-receive, and post-receive where it records landings) and nothing else, so the archive
 * holds what a push loads and not what the set-up loads (git processes, lease grants, temporary files): a
 * JVM relocates every page of its archive when it starts, and an AOT cache loads and links every class it
 * holds, so each class a push does not need is paid on every push.
 *
 * <p>The plan can be limited to one store ({@code sqlite} or {@code redis}): the archive a hook uses when
 * its installer knew the store.
 */
final class ArchiveTraining {
    private ArchiveTraining() {}

    /** The argument that makes the process entry set up a training and run the recording JVM. */
    static final String ARG = "--cds-training-run";

    /** The argument that makes the process entry (in the recording JVM) run a plan's hooks. */
    static final String RUN_ARG = "--cds-training-hooks";

    /** The hooks a plan's line runs: its first field. */
    private static final String PRE = "pre-receive";

    private static final String POST = "post-receive";

    /** A plan line that starts {@link Stores#preload} for a store kind, as a hook installed for it does. */
    private static final String PRELOAD = "preload";

    /** The file the plan is written to, in the training's directory. */
    private static final String PLAN = "plan.tsv";

    /**
     * Sets up, runs {@code recorder} followed by {@code dev.fence.cli.Main --cds-training-hooks DIR}, and
     * cleans up. Returns the recorder's exit code.
     *
     * @param args {@code [--store sqlite|redis] [--] java-and-options...}; without a recorder command the
     *     plan runs in this JVM (a training without a separate recording process)
     */
    /**
     * The exit status of a training asked for a store it has nothing to train on: fence's code for a bad
     * configuration ({@code ExitCode.CONFIG} in the command line, which this wing does not depend on).
     */
    static final int NO_STORE_TO_TRAIN_ON = 6;

    static int run(Map<String, String> processEnv, List<String> args) throws IOException, InterruptedException {
        String only = null;
        List<String> recorder = new ArrayList<>(args);
        if (recorder.size() >= 2 && recorder.get(0).equals("--store")) {
            only = recorder.get(1);
            recorder = recorder.subList(2, recorder.size());
        }
        if (!recorder.isEmpty() && recorder.get(0).equals("--")) {
            recorder = recorder.subList(1, recorder.size());
        }
        if (only != null && !only.equals("sqlite") && !only.equals("redis")) {
            throw new IllegalArgumentException("--store must be sqlite or redis, not " + only);
        }
        Path dir = Files.createTempDirectory("fence-warmup");
        PrivateRedis privateRedis = null;
        try {
            List<String> plan = new ArrayList<>();
            Map<String, String> env = Git.isolatedEnv(processEnv, dir, "fence", "fence@localhost");
            if (only == null || only.equals("sqlite")) {
                prepare(env, dir, "sqlite", "sqlite:" + dir.resolve("warmup.db"), plan);
            }
            if (only == null || only.equals("redis")) {
                String redis = processEnv.get("FENCE_WARMUP_REDIS");
                if (redis == null || redis.isBlank()) {
                    Path server = PrivateRedis.find(processEnv.get("PATH"), "redis-server");
                    if (server != null) {
                        try {
                            privateRedis = PrivateRedis.start(server);
                            redis = privateRedis.url();
                        } catch (IOException e) {
                            // The archive then covers SQLite only; Redis hooks still work, a little slower.
                        }
                    }
                }
                if (redis != null && !redis.isBlank()) {
                    prepare(env, dir, "redis", redis, plan);
                } else if (only != null) {
                    // An archive of a Redis hook trained on nothing would hold less than the one of all
                    // stores: better none, so that the hook falls back to that one.
                    System.err.println("fence: no Redis to train a Redis hook's archive on: put redis-server on PATH"
                            + " or set FENCE_WARMUP_REDIS to a server fence may write throw-away keys to");
                    return NO_STORE_TO_TRAIN_ON;
                }
            }
            Files.write(dir.resolve(PLAN), plan, StandardCharsets.UTF_8);
            if (recorder.isEmpty()) {
                runPlan(dir.toString());
                return 0;
            }
            List<String> command = new ArrayList<>(recorder);
            command.addAll(List.of(JvmSettings.MAIN, RUN_ARG, dir.toString()));
            ProcessBuilder pb = new ProcessBuilder(command)
                    .redirectOutput(ProcessBuilder.Redirect.INHERIT)
                    .redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().clear();
            pb.environment().putAll(processEnv);
            // As git often starts hooks: without USER, so that the recording JVM's entry takes the path that
            // supplies one (a copy of the environment, classes of its own) and the archive holds it.
            pb.environment().remove("USER");
            pb.environment().remove("LOGNAME");
            Process p = pb.start();
            p.getOutputStream().close();
            return p.waitFor();
        } finally {
            if (privateRedis != null) {
                privateRedis.close();
            }
            delete(dir.toFile());
        }
    }

    /**
     * Runs the hooks of the plan in {@code dir}, each as git would start it: this is all the recording JVM
     * does, so that the archive holds what a push loads and little else (plain java.io to read the plan).
     */
    static void runPlan(String dir) throws IOException {
        // A hook's threads load classes at once, and a contended insertion into the class loader's lock map
        // draws on ThreadLocalRandom (with Random and its interfaces): by chance in a hook, so not always
        // in this run, and read from the JDK's module image (about 1 ms) whenever the archive lacks it.
        ThreadLocalRandom.current();
        // Likewise a thread that waits for a latch or a lock another holds queues a node of the JDK's
        // synchronizer framework: the hook's store thread waits for the push, which this run's timing may
        // not reproduce, so a wait is made here for certain.
        queueOnceOnALock();
        File plan = new File(dir, PLAN);
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(new FileInputStream(plan), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split("\t", -1);
                if (f.length != 5 || !(f[0].equals(PRE) || f[0].equals(POST) || f[0].equals(PRELOAD))) {
                    throw new IOException(plan + ": malformed line: " + line);
                }
                if (f[0].equals(PRELOAD)) {
                    Stores.preload(f[1]);
                    continue;
                }
                Map<String, String> env = new HashMap<>();
                env.put("GIT_DIR", ".");
                env.put("USER", "warmup");
                env.put("HOME", dir);
                env.put("GIT_PUSH_OPTION_COUNT", "2");
                env.put("GIT_PUSH_OPTION_0", "fence=" + f[2]);
                env.put("GIT_PUSH_OPTION_1", "fence-proof=" + f[3]);
                hook(f[0], env, Path.of(f[1]), f[4] + "\n");
            }
        }
    }

    /** Waits for a latch, then for a lock. */
    private static final class Waiter extends Thread {
        private final CountDownLatch latch;
        private final ReentrantLock lock;

        Waiter(CountDownLatch latch, ReentrantLock lock) {
            this.latch = latch;
            this.lock = lock;
        }

        @Override
        public void run() {
            try {
                latch.await();
            } catch (InterruptedException e) {
                return;
            }
            lock.lock();
            lock.unlock();
        }
    }

    /** Makes a thread wait in a latch's queue and in a lock's, so that their node classes are loaded. */
    private static void queueOnceOnALock() throws IOException {
        ReentrantLock lock = new ReentrantLock();
        CountDownLatch latch = new CountDownLatch(1);
        Waiter waiter = new Waiter(latch, lock);
        lock.lock();
        try {
            waiter.start();
            while (!lock.hasQueuedThreads() && waiter.isAlive()) {
                if (waiter.getState() == Thread.State.WAITING && latch.getCount() > 0) {
                    latch.countDown();
                }
                Thread.onSpinWait();
            }
        } finally {
            latch.countDown();
            lock.unlock();
        }
        try {
            waiter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * A repository for {@code store} set up as {@code fence install} does (the store in its fence.conf, the
     * repo id in its git config), a lease granted on its main branch, and the hooks to run as git runs them
     * for pushes that land: pre-receive and post-receive of a create, then of a fast-forward, and pre-receive
     * of a push under an older token (FENCED). Each landed push gets its post-receive: a pre-receive that
     * found a landing still pending would ask git where the ref is, and the archive would then hold the
     * JDK's process and method-handle machinery, which a push that asks git nothing never loads and every
     * push would pay for (LauncherArchiveIT).
     */
    private static void prepare(Map<String, String> env, Path dir, String name, String store, List<String> plan)
            throws IOException, InterruptedException {
        Path bare = dir.resolve(name + ".git");
        git(env, dir, "init", "-q", "--bare", bare.toString());
        // Loose objects, as a small push's arrive.
        String emptyTree = git(env, bare, "hash-object", "-t", "tree", "-w", "--stdin");
        String first = git(env, bare, "commit-tree", emptyTree, "-m", "one");
        String second = git(env, bare, "commit-tree", emptyTree, "-p", first, "-m", "two");
        String repoId = "warmup-" + name + "-" + System.nanoTime();
        Files.writeString(bare.resolve("fence.conf"), "store = " + store + "\n");
        git(env, bare, "config", "fence.repoId", repoId);
        // As fence install --bare sets it by default: the hook then defers its landings to post-receive
        // (LandingRecorder), whose classes a push on plain git or Gitea loads, and so the archive must hold.
        git(env, bare, "config", HookConfig.RECORD_LANDED_KEY, "true");
        Grant g;
        try (LeaseStore s = Stores.open(store, StoreOptions.defaults().withSingleConnection(true))) {
            var outcome = new LeaseService(s, Clock.systemUTC())
                    .acquire(Resources.forRef(repoId, "refs/heads/main"), "warmup", Duration.ofMinutes(5), null);
            g = ((LeaseService.AcquireOutcome.Acquired) outcome).grant();
        }
        // Where the fast-forward leaves it, so that its post-receive finds the push landed.
        git(env, bare, "update-ref", "refs/heads/main", second);
        String zero = "0".repeat(40);
        String token = Long.toString(g.token());
        String b = bare.toString();
        // The hook fence install writes for this store kind starts with its preload (JvmSettings#STORE_HINT).
        plan.add(String.join("\t", PRELOAD, name, "", "", ""));
        plan.add(String.join("\t", PRE, b, token, g.proof(), zero + " " + first + " refs/heads/main"));
        plan.add(String.join("\t", POST, b, token, g.proof(), zero + " " + first + " refs/heads/main"));
        plan.add(String.join("\t", PRE, b, token, g.proof(), first + " " + second + " refs/heads/main"));
        plan.add(String.join("\t", POST, b, token, g.proof(), first + " " + second + " refs/heads/main"));
        plan.add(String.join(
                "\t", PRE, b, Long.toString(g.token() - 1), g.proof(), second + " " + first + " refs/heads/main"));
    }

    private static void hook(String name, Map<String, String> env, Path bare, String stdin) {
        HookRunner.fastPath(
                new HookRunner.Io(
                        new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                        new PrintWriter(
                                new OutputStreamWriter(OutputStream.nullOutputStream(), StandardCharsets.UTF_8), true),
                        Collections.unmodifiableMap(env),
                        UtcMillisClock.INSTANCE,
                        bare),
                new String[] {"hook", name});
    }

    private static void delete(File f) {
        File[] children = f.listFiles();
        if (children != null) {
            for (File c : children) {
                delete(c);
            }
        }
        f.delete();
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
