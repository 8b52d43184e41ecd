package dev.fence.bench;

import dev.fence.core.FencePolicy;
import dev.fence.core.Grant;
import dev.fence.core.Identities;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.Resources;
import dev.fence.git.Git;
import dev.fence.hook.HookConfig;
import dev.fence.hookpath.JvmSettings;
import dev.fence.install.HookScripts;
import dev.fence.install.Launch;
import dev.fence.install.ShimSettings;
import dev.fence.server.CredentialsFile;
import dev.fence.server.HookServer;
import dev.fence.server.Role;
import dev.fence.server.ServerSettings;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.store.redis.RedisLeaseStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code fence bench}: measures, in one run on one machine, what design §7 budgets. Pushes through no
 * hook, a bash + redis-cli reference hook, a JVM hello-world (the floor), the Java hook on SQLite and on
 * Redis (JDK 17 with its CDS archive, JDK 25 with its AOT cache), and the curl shim through an
 * in-process {@code fence serve}; the server's verdict latency, warm, and a new server's first verdicts
 * with and without its warm-up; and lease throughput through a
 * long-running client next to {@code redis-benchmark} running the same script. Starts its own
 * {@code redis-server} on a free loopback port and removes everything it made.
 */
public final class Bench {
    /** Untimed lease acquires before the lease rows, so that the client's hot path is compiled. */
    static final Duration CLIENT_WARMUP = Duration.ofSeconds(3);

    private Bench() {}

    /**
     * What to run.
     *
     * @param pushes timed pushes per scenario
     * @param warmup untimed pushes per scenario first
     * @param jdk17 home of the JDK 17 to run the hook with, or null to skip those rows
     * @param jdk25 home of a JDK 25+, or null to skip those rows
     * @param launcher the {@code bin/fence} launcher, or null to start java directly
     * @param jar the fence jar
     * @param leaseSeconds how long each lease-throughput measurement runs
     * @param callers the concurrencies of the lease measurements
     * @param verdicts timed verdict requests to {@code fence serve}
     */
    public record Options(
            int pushes,
            int warmup,
            Path jdk17,
            Path jdk25,
            Path launcher,
            Path jar,
            int leaseSeconds,
            List<Integer> callers,
            int verdicts,
            Build baseline) {}

    /**
     * What the operator asked for; {@link #options} checks it and fills in the defaults.
     *
     * @param jdk17 JDK 17 home, or null for the running JDK (17 to 24) or one under /usr/lib/jvm
     * @param jdk25 JDK 25+ home, or null for /usr/lib/jvm/temurin-25* when present
     * @param noJdk25 skip the JDK 25 rows
     * @param hookLauncher the launcher of the Java hook rows, or null for {@code $FENCE_LAUNCHER}
     * @param hookJar the jar of the Java hook rows, or null for the one this class came from
     * @param baselineLauncher with {@code baselineJar}: another build to run beside this one, or null
     */
    public record Request(
            int pushes,
            int warmup,
            Path jdk17,
            Path jdk25,
            boolean noJdk25,
            int leaseSeconds,
            int verdicts,
            Path hookLauncher,
            Path hookJar,
            Path baselineLauncher,
            Path baselineJar) {}

    /**
     * Checks {@code r} and resolves its defaults.
     *
     * @param env the process environment ({@code FENCE_LAUNCHER})
     * @throws InvalidInputException for a value out of range, a path that is not a JDK home, launcher or
     *     jar, or a baseline launcher without its jar
     */
    public static Options options(Request r, Map<String, String> env) {
        if (r.pushes() < 1 || r.pushes() > 1000 || r.warmup() < 0 || r.warmup() > 100) {
            throw new InvalidInputException("--pushes must be from 1 to 1000 and --warmup from 0 to 100");
        }
        if (r.leaseSeconds() < 1 || r.leaseSeconds() > 60 || r.verdicts() < 1 || r.verdicts() > 100_000) {
            throw new InvalidInputException("--lease-seconds must be from 1 to 60 and --verdicts from 1 to 100000");
        }
        for (Path j : new Path[] {r.jdk17(), r.jdk25()}) {
            if (j != null && !Files.isExecutable(j.resolve("bin").resolve("java"))) {
                throw new InvalidInputException(j + " is not a JDK home (no bin/java)");
            }
        }
        Path running = Path.of(System.getProperty("java.home"));
        Path j17 = r.jdk17() != null ? r.jdk17() : findJdk17(running);
        Path j25 = r.noJdk25() ? null : r.jdk25() != null ? r.jdk25() : findJdk25();
        String launcherEnv = env.get("FENCE_LAUNCHER");
        Path launcher = r.hookLauncher() != null
                ? r.hookLauncher()
                : launcherEnv == null || launcherEnv.isBlank() ? null : Path.of(launcherEnv);
        Path jar = r.hookJar() != null ? r.hookJar() : thisJar();
        if ((r.baselineLauncher() == null) != (r.baselineJar() == null)) {
            throw new InvalidInputException("--baseline-launcher and --baseline-jar go together");
        }
        Build baseline = null;
        if (r.baselineLauncher() != null) {
            if (!Files.isExecutable(r.baselineLauncher()) || !Files.isRegularFile(r.baselineJar())) {
                throw new InvalidInputException("--baseline-launcher must be an executable launcher and --baseline-jar"
                        + " a jar: " + r.baselineLauncher() + ", " + r.baselineJar());
            }
            baseline = new Build(
                    r.baselineLauncher().toAbsolutePath(), r.baselineJar().toAbsolutePath());
        }
        return new Options(
                r.pushes(),
                r.warmup(),
                j17,
                j25,
                launcher,
                jar,
                r.leaseSeconds(),
                List.of(1, 8, 32),
                r.verdicts(),
                baseline);
    }

    /** The jar (or classes directory) fence runs from. */
    static Path thisJar() {
        try {
            return Path.of(Bench.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException("fence's own location is not a path", e);
        }
    }

    /**
     * Another build of fence, whose Java hook rows run beside this build's, push by push, so that the
     * two are compared under the same load.
     */
    public record Build(Path launcher, Path jar) {}

    /**
     * Runs everything; progress goes to {@code progress}.
     *
     * @param env the process environment (PATH finds git, bash, redis-server, redis-benchmark, curl)
     */
    public static BenchReport run(Options o, Map<String, String> env, PrintWriter progress) throws Exception {
        BenchReport report = new BenchReport();
        report.machine(machine(o, env));
        Path work = Files.createTempDirectory("fence-bench");
        PrivateRedis redis = null;
        HookServer server = null;
        List<LeaseStore> stores = new ArrayList<>();
        try {
            Path redisServer = PrivateRedis.find(env.get("PATH"), "redis-server");
            Path redisCli = PrivateRedis.find(env.get("PATH"), "redis-cli");
            Path redisBenchmark = PrivateRedis.find(env.get("PATH"), "redis-benchmark");
            if (redisServer == null) {
                report.note("redis-server is not on PATH: the reference hook, the Redis rows, the lease rows and"
                        + " redis-benchmark are skipped");
            } else {
                redis = PrivateRedis.start(redisServer);
                progress.println("private redis-server on 127.0.0.1:" + redis.port());
            }
            if (redis != null && redisCli == null) {
                report.note("redis-cli is not on PATH: the reference hook is skipped");
            }
            Map<String, String> gitEnv = gitEnv(env, work);

            // The archives, made now for this jar by the training run (with Redis when there is one).
            Build build = new Build(o.launcher(), o.jar());
            Map<String, String> archives = new LinkedHashMap<>();
            Map<String, String> baselineArchives = new LinkedHashMap<>();
            for (Path jdk : jdks(o)) {
                archives.put(jdk.toString(), buildArchive(build, jdk, env, redis, progress, report));
                if (o.baseline() != null) {
                    baselineArchives.put(jdk.toString(), buildArchive(o.baseline(), jdk, env, redis, progress, report));
                }
            }

            String sqliteUrl = "sqlite:" + work.resolve("fence.db");
            PushBench pushes = new PushBench(work.resolve("repos"), gitEnv, progress);
            Files.createDirectories(work.resolve("repos"));
            List<String> dummy =
                    List.of("fence=1000", "fence-proof=fp1.bench.0000000000000000000000000000000000000000000");
            pushes.add("nohook", "no hook", null, Map.of(), (id, bare) -> dummy);
            if (redis != null && redisCli != null) {
                Path reference = work.resolve("reference-pre-receive.sh");
                copyResource("reference-pre-receive.sh", reference);
                String hook = "#!/bin/sh\nexport FENCE_BENCH_REDIS_PORT=" + redis.port() + "\nexec " + reference + "\n";
                pushes.add("reference", "bash + redis-cli reference hook", hook, Map.of(), (id, bare) -> dummy);
            }
            Path hello = work.resolve("hello");
            copyClass(Hello.class, hello);
            for (Path jdk : jdks(o)) {
                String v = jdkTag(jdk);
                String java = jdk.resolve("bin").resolve("java").toString();
                // The floor starts with the options the launcher gives a hook on this JDK.
                List<String> floorOptions = new ArrayList<>(JvmSettings.OPTIONS);
                floorOptions.addAll(JvmSettings.jdkOptions(jdkMajor(jdk)));
                String floor = "#!/bin/sh\nexec " + java + " " + String.join(" ", floorOptions) + " -cp " + hello + " "
                        + Hello.class.getName() + "\n";
                pushes.add(
                        "floor" + v,
                        "JVM hello world, JDK " + v + " (the floor)",
                        floor,
                        Map.of(),
                        (id, bare) -> dummy);
                String archive = archives.get(jdk.toString());
                javaHooks(
                        pushes,
                        "",
                        jdk,
                        archive,
                        sqliteUrl,
                        redis,
                        stores,
                        url -> javaHook(build, jdk, url),
                        build.launcher() == null ? null : url -> javaHook(build, jdk, url, "post-receive"),
                        gitEnv);
                if (o.baseline() != null) {
                    // The archive kind is the same as this build's row above (or the note says it is missing).
                    String baseline = baselineArchives.get(jdk.toString()).equals("no archive")
                            ? "baseline build, no archive"
                            : "baseline build";
                    Path installs = work.resolve("baseline-installs");
                    javaHooks(
                            pushes,
                            "base-",
                            jdk,
                            baseline,
                            sqliteUrl,
                            redis,
                            stores,
                            url -> installedHook(o.baseline(), jdk, url, installs, gitEnv, "pre-receive"),
                            url -> installedHook(o.baseline(), jdk, url, installs, gitEnv, "post-receive"),
                            gitEnv);
                }
            }
            String serverStore = redis != null ? redis.url() : sqliteUrl;
            Path credentials = work.resolve("credentials");
            String hookCredential =
                    CredentialsFile.add(credentials, "bench-hook", Role.HOOK, List.of(), new SecureRandom());
            server = startServer(serverStore, credentials);
            Path curl = PrivateRedis.find(env.get("PATH"), "curl");
            if (curl == null) {
                report.note("curl is not on PATH: the curl shim row is skipped");
            } else {
                String shim = readResource("/dev/fence/install/pre-receive-curl.sh");
                // As fence install --bare --shim curl writes it (the repo id is the scenario's directory name).
                String conf = HookScripts.shimConf(
                        server.uri().toString(),
                        hookCredential,
                        new ShimSettings(FencePolicy.defaults(), "shim", null));
                String store = serverStore;
                String kind = redis != null ? "Redis" : "SQLite";
                pushes.add(
                        "shim",
                        "curl shim -> fence serve (" + kind + ")",
                        shim,
                        Map.of("hooks/fence-shim.conf", conf),
                        (id, bare) -> grantOptions(store, id, stores));
                String baseShim = o.baseline() != null ? jarEntry(o.baseline().jar(), CURL_SHIM) : null;
                if (baseShim != null) {
                    // The baseline build's shim against the same server, with settings written the same way.
                    pushes.add(
                            "base-shim",
                            "curl shim -> fence serve (" + kind + ", baseline build)",
                            baseShim,
                            Map.of(
                                    "hooks/fence-shim.conf",
                                    HookScripts.shimConf(
                                            server.uri().toString(),
                                            hookCredential,
                                            new ShimSettings(FencePolicy.defaults(), "base-shim", null))),
                            (id, bare) -> grantOptions(store, id, stores));
                }
            }
            // The server's own verdict latency, from an in-process client, of a server in the state a long-running
            // one is in: its verdict path compiled. 200 requests do not get it there (on two cores the median of
            // a new server's first thousand verdicts was two to three times a warm one's, the JIT compiling on
            // the cores the verdicts need), so it is first warmed as the scale rows warm it. Measured before the
            // pushes, so that the shim's pushes meet that server too.
            progress.println(
                    "fence serve: warming it until the JIT is quiet (at most " + SERVE_WARMUP.toSeconds() + " s)");
            LeaseStore warmStore = Stores.open(serverStore, StoreOptions.defaults());
            stores.add(warmStore);
            List<VerdictLoad> warmLoads = Scale.loads(
                    new LeaseService(warmStore, Clock.systemUTC()), server, hookCredential, "bench-warm", 16);
            report.note(Scale.warm(Scale.primed(warmLoads), SERVE_WARMUP));
            progress.println("fence serve verdicts: " + o.verdicts() + " requests");
            List<String> verdictOptions = grantOptions(serverStore, "bench-verdicts", stores);
            VerdictLoad verdicts = new VerdictLoad(server.uri(), hookCredential, "bench-verdicts", verdictOptions);
            report.verdicts(Stats.of(verdicts.run(Math.min(200, o.verdicts()), o.verdicts())));

            progress.println("pushing: " + (o.warmup() + o.pushes()) + " rounds, one push per scenario each");
            var results = pushes.run(o.pushes(), o.warmup());
            results.values().forEach(report::push);
            server.close();
            server = null;

            if (build.launcher() != null) {
                // A new server's first verdicts, as hooks meet one after a restart: without fence serve's warm-up
                // and after it. This JVM's client has long been compiled by now; the servers are new processes.
                for (int warmUp : List.of(0, NEW_SERVER_WARM_UP)) {
                    progress.println("a new fence serve (--warm-up " + warmUp + "): its first " + NEW_SERVER_VERDICTS
                            + " verdicts");
                    try {
                        report.newServer(
                                warmUp,
                                Stats.of(newServerVerdicts(
                                        build, env, work, credentials, hookCredential, warmUp, stores)));
                    } catch (IOException e) {
                        report.note("a new fence serve (--warm-up " + warmUp + ") was not measured: " + e.getMessage());
                    }
                }
            }

            if (redis != null) {
                leases(o, env, redis, redisBenchmark, report, progress, stores);
            }
        } finally {
            if (server != null) {
                server.close();
            }
            stores.forEach(LeaseStore::close);
            if (redis != null) {
                redis.close();
            }
            deleteTree(work);
        }
        report.loadAtEnd(loadAverage());
        return report;
    }

    private static void leases(
            Options o,
            Map<String, String> env,
            PrivateRedis redis,
            Path redisBenchmark,
            BenchReport report,
            PrintWriter progress,
            List<LeaseStore> stores)
            throws IOException {
        LeaseStore store = RedisLeaseStore.open(redis.url(), StoreOptions.defaults());
        stores.add(store);
        // The long-running client of design §7 is fence serve, which authenticates its holders: its service
        // takes a holder's own live lease again without the grant a direct-mode acquire must show, as these
        // callers do over and over on one keyspace.
        LeaseService service = LeaseService.forAuthenticatedHolders(store, Clock.systemUTC());
        Instant now = Instant.now();
        store.identity(Identities.candidate(now));
        List<String> evalsha = RedisLeaseStore.acquireEvalshaArguments(
                LeaseLoad.RESOURCE_PATTERN, "bench", Duration.ofMinutes(1).toMillis(), now, StoreOptions.defaults());
        // A long-running client has its hot path compiled: a JVM that has just started would spend the
        // first seconds of the rows compiling it, on the cores the callers and the server need.
        progress.println("lease acquires: warming the client up, " + CLIENT_WARMUP.toSeconds() + " s at 8 callers");
        LeaseLoad.fence(service, 8, CLIENT_WARMUP, Duration.ofMillis(100));
        for (int callers : o.callers()) {
            progress.println("lease acquires, " + callers + " callers: fence client, " + o.leaseSeconds() + " s");
            LeaseLoad.Row fence =
                    LeaseLoad.fence(service, callers, Duration.ofMillis(500), Duration.ofSeconds(o.leaseSeconds()));
            LeaseLoad.Row yardstick = null;
            if (redisBenchmark != null) {
                int requests = (int) Math.max(10_000, Math.min(2_000_000, fence.opsPerSecond() * o.leaseSeconds()));
                progress.println("lease acquires, " + callers + " callers: redis-benchmark, " + requests + " calls");
                yardstick = LeaseLoad.redisBenchmark(redisBenchmark, redis.port(), evalsha, callers, requests, env);
            }
            report.lease(fence, yardstick);
        }
        if (redisBenchmark == null) {
            report.note("redis-benchmark is not on PATH: the lease rows have no yardstick");
        }
    }

    /** The longest {@code fence serve} is warmed before its verdict latency is timed ({@link Scale#warm}). */
    static final Duration SERVE_WARMUP = Duration.ofSeconds(60);

    static HookServer startServer(String storeUrl, Path credentials) {
        HookConfig config = new HookConfig(
                FencePolicy.defaults(), Optional.of(storeUrl), Optional.empty(), Optional.empty(), Optional.empty());
        ServerSettings settings =
                ServerSettings.of(new InetSocketAddress("127.0.0.1", 0), storeUrl, credentials, config);
        StoreOptions options = StoreOptions.defaults();
        return HookServer.start(settings, u -> Stores.open(u, options), Clock.systemUTC(), line -> {});
    }

    /** The verdicts timed of each new server: about as many as a day of a small host's pushes. */
    static final int NEW_SERVER_VERDICTS = 200;

    /** The new server's warm-up in the row that has one: fence serve's default. */
    private static final int NEW_SERVER_WARM_UP = 10_000;

    /**
     * Starts {@code fence serve} (this build's launcher) on a new SQLite store with {@code --warm-up warmUp},
     * waits until it listens and, with a warm-up, until it says the warm-up is done, and times its first
     * {@link #NEW_SERVER_VERDICTS} verdicts, one after another as shims send them.
     */
    private static double[] newServerVerdicts(
            Build build,
            Map<String, String> env,
            Path work,
            Path credentials,
            String hookCredential,
            int warmUp,
            List<LeaseStore> stores)
            throws IOException, InterruptedException {
        Path dir = Files.createDirectories(work.resolve("new-server-" + warmUp));
        String store = "sqlite:" + dir.resolve("fence.db");
        ProcessBuilder pb = new ProcessBuilder(
                        build.launcher().toString(),
                        "serve",
                        "--listen",
                        "127.0.0.1:0",
                        "--store",
                        store,
                        "--credentials",
                        credentials.toString(),
                        "--warm-up",
                        Integer.toString(warmUp))
                .directory(dir.toFile())
                .redirectOutput(dir.resolve("out").toFile())
                .redirectError(dir.resolve("err").toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        // Its warm-up's scratch directory goes into the bench's, which the bench removes whatever happens.
        pb.environment().merge("FENCE_JAVA_OPTS", "-Djava.io.tmpdir=" + dir, (mine, tmp) -> mine + " " + tmp);
        Process serve = pb.start();
        try {
            String listening = awaitLine(serve, dir, "out", "listening on ");
            if (warmUp > 0) {
                String over = awaitLine(
                        serve, dir, "err", "fence serve: warmed the verdict path", "fence serve: the warm-up");
                if (!over.startsWith("fence serve: warmed")) {
                    throw new IOException(over);
                }
            }
            URI uri = URI.create(listening.substring("listening on ".length()).trim());
            VerdictLoad load =
                    new VerdictLoad(uri, hookCredential, "bench-new", grantOptions(store, "bench-new", stores));
            return load.run(0, NEW_SERVER_VERDICTS);
        } finally {
            serve.destroy();
            if (!serve.waitFor(30, TimeUnit.SECONDS)) {
                serve.destroyForcibly();
            }
        }
    }

    /**
     * The first whole line (its newline written) of the process's {@code file} that holds one of {@code texts},
     * from where it does, once it is there (at most 2 min).
     */
    private static String awaitLine(Process p, Path dir, String file, String... texts)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (true) {
            String written = Files.readString(dir.resolve(file));
            for (String line :
                    written.substring(0, written.lastIndexOf('\n') + 1).split("\n")) {
                for (String text : texts) {
                    int at = line.indexOf(text);
                    if (at >= 0) {
                        return line.substring(at);
                    }
                }
            }
            if (!p.isAlive() || System.nanoTime() > deadline) {
                throw new IOException("fence serve did not say '" + texts[0] + "' ("
                        + (p.isAlive() ? "in 2 min" : "exited") + "): "
                        + Files.readString(dir.resolve("err")).trim());
            }
            Thread.sleep(50);
        }
    }

    /** A lease on the repository's main branch in the store at {@code url}; the push options it needs. */
    private static List<String> grantOptions(String url, String repoId, List<LeaseStore> stores) {
        LeaseStore store = Stores.open(url, StoreOptions.defaults());
        stores.add(store);
        var outcome = new LeaseService(store, Clock.systemUTC())
                .acquire(Resources.forRef(repoId, "refs/heads/main"), "bench", Duration.ofHours(1), null);
        Grant g = ((LeaseService.AcquireOutcome.Acquired) outcome).grant();
        return List.of("fence=" + g.token(), "fence-proof=" + g.proof());
    }

    /** Writes the pre-receive hook for a store URL. */
    @FunctionalInterface
    private interface HookWriter {
        String hookFor(String storeUrl) throws IOException;
    }

    /**
     * The Java hook rows on {@code jdk}: SQLite, and Redis when there is a server; and, given {@code
     * postReceives}, SQLite with post-receive recording landings (what a default bare install runs).
     */
    private static void javaHooks(
            PushBench pushes,
            String idPrefix,
            Path jdk,
            String archive,
            String sqliteUrl,
            PrivateRedis redis,
            List<LeaseStore> stores,
            HookWriter hooks,
            HookWriter postReceives,
            Map<String, String> gitEnv)
            throws IOException {
        String v = jdkTag(jdk);
        String sqliteHook = hooks.hookFor(sqliteUrl);
        Map<String, String> sqliteConf = Map.of("fence.conf", "store = " + sqliteUrl + "\n");
        pushes.add(
                idPrefix + "sqlite" + v,
                "Java hook, SQLite, JDK " + v + " (" + archive + ")",
                sqliteHook,
                sqliteConf,
                (id, bare) -> grantOptions(sqliteUrl, id, stores));
        if (redis != null) {
            String url = redis.url();
            pushes.add(
                    idPrefix + "redis" + v,
                    "Java hook, Redis, JDK " + v + " (" + archive + ")",
                    hooks.hookFor(url),
                    Map.of("fence.conf", "store = " + url + "\n"),
                    (id, bare) -> grantOptions(url, id, stores));
        }
        if (postReceives != null) {
            // The whole cost of a push on a default bare install, where post-receive records landings.
            String post = postReceives.hookFor(sqliteUrl);
            pushes.add(
                    idPrefix + "landed-sqlite" + v,
                    "Java pre- and post-receive, SQLite, JDK " + v + " (" + archive + ")",
                    sqliteHook,
                    sqliteConf,
                    (id, bare) -> {
                        recordLanded(bare, post, gitEnv);
                        return grantOptions(sqliteUrl, id, stores);
                    });
        }
    }

    /**
     * The hook {@code name} that {@code build}'s own {@code fence install --bare --store URL} writes when
     * run with {@code jdk}: another build's hook as that build installs it (its script, its JVM options),
     * with {@code JAVA_HOME} set as {@link #javaHook} sets it.
     */
    private static String installedHook(
            Build build, Path jdk, String storeUrl, Path dir, Map<String, String> gitEnv, String name)
            throws IOException {
        Files.createDirectories(dir);
        Path repo = Files.createTempDirectory(dir, "repo-").resolve("r.git");
        Procs.check(dir, gitEnv, List.of("git", "init", "-q", "--bare", repo.toString()));
        Map<String, String> e = new HashMap<>(gitEnv);
        e.put("JAVA_HOME", jdk.toString());
        e.remove("FENCE_JAVA");
        e.remove("FENCE_JAR");
        e.remove("FENCE_LAUNCHER");
        Procs.check(dir, e, List.of(build.launcher().toString(), "install", "--bare=" + repo, "--store=" + storeUrl));
        String hook = Files.readString(repo.resolve("hooks").resolve(name), StandardCharsets.UTF_8);
        return hook.replaceFirst("\n", "\nJAVA_HOME=" + jdk + "; export JAVA_HOME\n");
    }

    /**
     * The hook script that runs this build's Java hook with {@code jdk}: the one {@code fence install --bare
     * --store} writes for {@code storeUrl} (starting the JVM itself, from the archive trained on that store's
     * kind, while it is current), with {@code JAVA_HOME} set so that its launcher fallback would pick the
     * same JDK.
     */
    static String javaHook(Build o, Path jdk, String storeUrl) {
        return javaHook(o, jdk, storeUrl, "pre-receive");
    }

    /** As {@link #javaHook(Build, Path, String)}, for {@code hook} (pre-receive or post-receive). */
    static String javaHook(Build o, Path jdk, String storeUrl, String hook) {
        String storeKind = JvmSettings.storeKind(storeUrl);
        String java = jdk.resolve("bin").resolve("java").toString();
        String version = jdkVersion(jdk);
        if (o.launcher() != null && !version.equals("?")) {
            Launch.Direct d = new Launch.Direct(
                    new Launch.Launcher(o.launcher().toString()),
                    jdk.toString(),
                    version,
                    o.jar().toString(),
                    storeKind);
            String installed = hook.equals("post-receive") ? HookScripts.postReceive(d) : HookScripts.preReceive(d);
            return installed.replaceFirst("\n", "\nJAVA_HOME=" + jdk + "; export JAVA_HOME\n");
        }
        List<String> words = new ArrayList<>(List.of(java));
        words.addAll(JvmSettings.OPTIONS);
        words.addAll(List.of("-cp", o.jar().toString(), "dev.fence.cli.Main", "hook", hook));
        return "#!/bin/sh\nexec " + String.join(" ", words) + "\n";
    }

    /** Makes {@code bare} record landings as {@code fence install --bare} does: post-receive, and the setting. */
    static void recordLanded(Path bare, String postReceive, Map<String, String> gitEnv) throws IOException {
        Path hook = bare.resolve("hooks").resolve("post-receive");
        Files.writeString(hook, postReceive, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        Procs.check(bare, gitEnv, List.of("git", "config", HookConfig.RECORD_LANDED_KEY, "true"));
    }

    /** Runs the launcher's training run for {@code jdk}; says which archive the hook rows use. */
    private static String buildArchive(
            Build o, Path jdk, Map<String, String> env, PrivateRedis redis, PrintWriter progress, BenchReport report)
            throws IOException {
        boolean aot = jdkMajor(jdk) >= 25;
        String kind = aot ? "AOT cache" : "CDS archive";
        if (o.launcher() == null) {
            report.note("no launcher (run fence bench through bin/fence): the Java hook rows run without a " + kind);
            return "no archive";
        }
        Map<String, String> e = new HashMap<>(env);
        e.put("FENCE_JAVA", jdk.resolve("bin").resolve("java").toString());
        e.put("FENCE_JAR", o.jar().toString());
        if (redis != null) {
            e.put("FENCE_WARMUP_REDIS", redis.url());
        }
        // One per store, as 'fence install --bare --store URL' makes for the store it installs with.
        for (String store : redis != null ? List.of("sqlite", "redis") : List.of("sqlite")) {
            progress.println("training run for JDK " + jdkTag(jdk) + ": " + kind + " for " + store);
            Procs.Outcome out =
                    Procs.run(Path.of("."), e, List.of(o.launcher().toString(), "--build-archive", store), 300);
            if (out.exit() != 0) {
                report.note("the " + store + " " + kind + " for JDK " + jdkTag(jdk) + " could not be made: "
                        + out.output().trim());
                return "no archive";
            }
        }
        return kind;
    }

    private static List<Path> jdks(Options o) {
        List<Path> out = new ArrayList<>();
        if (o.jdk17() != null) {
            out.add(o.jdk17());
        }
        if (o.jdk25() != null) {
            out.add(o.jdk25());
        }
        return out;
    }

    /** The JDK's major version, from its release file (0 when unknown). */
    /** The JDK's feature release, from its release file (0 when unknown). */
    static int jdkMajor(Path jdk) {
        return JvmSettings.feature(jdkVersion(jdk));
    }

    /** The JDK's version as its release file spells it (as the launcher reads it), or "?". */
    static String jdkVersion(Path jdk) {
        return JvmSettings.releaseVersion(jdk).orElse("?");
    }

    private static String jdkTag(Path jdk) {
        return Integer.toString(jdkMajor(jdk));
    }

    /** The first JDK 25+ under /usr/lib/jvm named temurin-25*, or null. */
    static Path findJdk25() {
        Path base = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(base)) {
            return null;
        }
        try (Stream<Path> dirs = Files.list(base)) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("temurin-25"))
                    .filter(d -> Files.isExecutable(d.resolve("bin").resolve("java")))
                    .sorted()
                    .findFirst()
                    .orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    /** The running JVM's home when it is a JDK 17 to 24, else the first such JDK under /usr/lib/jvm, or null. */
    static Path findJdk17(Path running) {
        int major = jdkMajor(running);
        if (major >= 17 && major < 25) {
            return running;
        }
        Path base = Path.of("/usr/lib/jvm");
        try (Stream<Path> dirs = Files.list(base)) {
            return dirs.filter(d -> d.getFileName().toString().contains("17"))
                    .filter(d -> Files.isExecutable(d.resolve("bin").resolve("java")))
                    .filter(d -> jdkMajor(d) == 17)
                    .sorted()
                    .findFirst()
                    .orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    static Map<String, String> gitEnv(Map<String, String> env, Path work) throws IOException {
        Path home = work.resolve("home");
        Files.createDirectories(home);
        Map<String, String> e = Git.isolatedEnv(env, home, "bench", "bench@localhost");
        e.put("USER", "bench");
        e.put("LANG", "C");
        return e;
    }

    private static Map<String, Object> machine(Options o, Map<String, String> env) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cpu", cpuModel());
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("loadAtStart", loadAverage());
        m.put("jdk17", o.jdk17() == null ? null : jdkVersion(o.jdk17()));
        m.put("jdk25", o.jdk25() == null ? null : jdkVersion(o.jdk25()));
        m.put("launcher", o.launcher() == null ? null : o.launcher().toString());
        if (o.baseline() != null) {
            m.put("baselineLauncher", o.baseline().launcher().toString());
            m.put("baselineJar", o.baseline().jar().toString());
        }
        m.put("pushesPerScenario", o.pushes());
        m.put("git", version(env, "git", "--version"));
        m.put("redis", version(env, "redis-server", "--version"));
        m.put("curl", version(env, "curl", "--version"));
        return m;
    }

    private static String version(Map<String, String> env, String tool, String flag) {
        Path p = PrivateRedis.find(env.get("PATH"), tool);
        if (p == null) {
            return null;
        }
        try {
            String out = Procs.check(
                    Path.of("."), Map.of("PATH", env.getOrDefault("PATH", "")), List.of(p.toString(), flag));
            return out.lines().findFirst().orElse("");
        } catch (IOException e) {
            return null;
        }
    }

    static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).strip();
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    private static void copyClass(Class<?> c, Path root) throws IOException {
        String name = c.getName().replace('.', '/') + ".class";
        Path target = root.resolve(name);
        Files.createDirectories(target.getParent());
        try (InputStream in = c.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException(name + " is missing from the fence jar");
            }
            Files.write(target, in.readAllBytes());
        }
    }

    private static void copyResource(String name, Path target) throws IOException {
        Files.writeString(target, readResource("/dev/fence/bench/" + name), StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static final String CURL_SHIM = "dev/fence/install/pre-receive-curl.sh";

    /** A text file inside a jar, or null when it has none. */
    private static String jarEntry(Path jar, String name) throws IOException {
        try (java.util.jar.JarFile j = new java.util.jar.JarFile(jar.toFile())) {
            var e = j.getJarEntry(name);
            if (e == null) {
                return null;
            }
            try (var in = j.getInputStream(e)) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        }
    }

    private static String readResource(String name) throws IOException {
        try (InputStream in = Bench.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException(name + " is missing from the fence jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
