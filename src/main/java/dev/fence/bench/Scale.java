package dev.fence.bench;

import dev.fence.core.EventType;
import dev.fence.core.Identities;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.StoreIdentity;
import dev.fence.server.CredentialsFile;
import dev.fence.server.HookServer;
import dev.fence.server.Role;
import dev.fence.server.VerdictClient;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintWriter;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * {@code fence bench --scale}: how fence's cost grows with the store's size, the ledger's, the refs of one
 * push and the hooks asking at once. Every row is measured beside its baseline in the same run, call by call
 * in alternating blocks, and reported as a ratio to it: on a shared machine a change of load then falls on
 * both alike. Stores: SQLite files, private {@code redis-server}s on free loopback ports (never a shared
 * server), and databases of their own on a given PostgreSQL server, created and dropped by the run.
 */
public final class Scale {
    /** The stores the scale bench knows, in the order it runs them. */
    static final List<String> STORES = List.of("sqlite", "redis", "postgresql");

    /**
     * The groups of rows, in the order they run on each store: {@code store} (store size, ledger queries, refs
     * per push, verdicts during a trim, all on the same two stores), {@code concurrency} (hooks through fence
     * serve) and {@code push} (the whole largest push through the Java hook, SQLite only).
     */
    static final List<String> ROWS = List.of("store", "concurrency", "push");

    /**
     * The sizes of a run.
     *
     * @param leases leased branches of the store-size rows; the first is the baseline
     * @param events ledger events of the store-size rows; the first is the baseline
     * @param refs refs per push (half of them fenced branches, the rest tags)
     * @param clients concurrent hooks through fence serve
     * @param rounds alternating rounds per store-size row
     * @param perBlock calls per block (each round: a block on the empty store, a block on the seeded one)
     * @param clientTime how long each concurrency is measured
     * @param clientWarmup the longest the server is warmed before the concurrency rows (see {@link #warm})
     * @param trimVerdicts most verdicts spent waiting for a trim to finish
     */
    public record Sizes(
            List<Long> leases,
            List<Long> events,
            List<Integer> refs,
            List<Integer> clients,
            int rounds,
            int perBlock,
            Duration clientTime,
            Duration clientWarmup,
            int trimVerdicts) {}

    /** The sizes the issue asks for: minutes per store. */
    public static final Sizes FULL = new Sizes(
            List.of(1L, 10_000L, 100_000L),
            List.of(0L, 100_000L, 1_000_000L),
            List.of(1, 100, 1000, 10_000),
            List.of(1, 16, 64, 256),
            12,
            40,
            Duration.ofSeconds(5),
            Duration.ofSeconds(60),
            6000);

    /** Ten times smaller, for trying it out. */
    public static final Sizes QUICK = new Sizes(
            List.of(1L, 1000L, 10_000L),
            List.of(0L, 10_000L, 100_000L),
            List.of(1, 100, 1000),
            List.of(1, 16, 64),
            6,
            20,
            Duration.ofSeconds(2),
            Duration.ofSeconds(15),
            1000);

    /**
     * What to run.
     *
     * @param stores the store kinds, a subset of {@link #STORES}
     * @param postgres the server for the PostgreSQL rows, or null to skip them
     * @param rows the groups of rows to run, a subset of {@link #ROWS}
     */
    public record Options(
            Sizes sizes, boolean quick, List<String> stores, PostgresServerUrl postgres, List<String> rows) {}

    private Scale() {}

    /**
     * Checks what the operator asked for.
     *
     * @param stores store kinds by name, or null/empty for all
     * @param postgres {@code postgresql://USER@HOST:PORT[/DB]}, or null
     * @param rows groups of rows by name (see {@link #ROWS}), or null/empty for all
     * @throws InvalidInputException for an unknown store or group of rows, or a malformed URL
     */
    public static Options options(boolean quick, List<String> stores, String postgres, List<String> rows) {
        return new Options(
                quick ? QUICK : FULL,
                quick,
                chosen(stores, STORES, "--scale-stores", "store"),
                postgres == null ? null : PostgresServerUrl.parse(postgres),
                chosen(rows, ROWS, "--scale-rows", "group of rows"));
    }

    private static List<String> chosen(List<String> asked, List<String> known, String option, String what) {
        List<String> chosen = asked == null || asked.isEmpty() ? known : List.copyOf(asked);
        for (String s : chosen) {
            if (!known.contains(s)) {
                throw new InvalidInputException(
                        "unknown " + what + " '" + s + "' for " + option + ": use " + String.join(", ", known));
            }
        }
        return chosen;
    }

    /** Runs every row; progress goes to {@code progress}. */
    public static ScaleReport run(Options o, Map<String, String> env, PrintWriter progress) throws Exception {
        ScaleReport report = new ScaleReport();
        report.machine(machine(o, env));
        Path work = Files.createTempDirectory("fence-scale");
        try {
            for (String kind : o.stores()) {
                try (Kind k = kind(kind, o, env, work, report)) {
                    if (k == null) {
                        continue;
                    }
                    if (o.rows().contains("store")) {
                        storeRows(k, o.sizes(), report, progress);
                    }
                    if (o.rows().contains("concurrency")) {
                        concurrency(k, o.sizes(), work, report, progress);
                    }
                    if (kind.equals("sqlite") && o.rows().contains("push")) {
                        wholePush(k, o.sizes(), env, work, report, progress);
                    }
                }
            }
        } finally {
            Bench.deleteTree(work);
        }
        return report;
    }

    /** A kind of store: fresh empty stores of it, and a seeder for one of them. */
    interface Kind extends AutoCloseable {
        String name();

        /** The URL of a new empty store. */
        String newStore(String tag) throws IOException;

        Seeder seeder(String url) throws IOException;

        @Override
        void close();
    }

    private static Kind kind(String kind, Options o, Map<String, String> env, Path work, ScaleReport report)
            throws IOException {
        switch (kind) {
            case "sqlite":
                return new Kind() {
                    public String name() {
                        return "sqlite";
                    }

                    public String newStore(String tag) {
                        return "sqlite:" + work.resolve(tag + ".db");
                    }

                    public Seeder seeder(String url) throws IOException {
                        return SqlSeeder.sqlite(Path.of(url.substring("sqlite:".length())));
                    }

                    public void close() {}
                };
            case "redis": {
                Path server = PrivateRedis.find(env.get("PATH"), "redis-server");
                if (server == null) {
                    report.note("redis-server is not on PATH: the Redis rows are skipped");
                    return null;
                }
                return new Kind() {
                    private final Map<String, PrivateRedis> servers = new LinkedHashMap<>();

                    public String name() {
                        return "redis";
                    }

                    public String newStore(String tag) throws IOException {
                        PrivateRedis r = PrivateRedis.start(server);
                        servers.put(r.url(), r);
                        return r.url();
                    }

                    public Seeder seeder(String url) throws IOException {
                        return new RedisSeeder(servers.get(url).port());
                    }

                    public void close() {
                        servers.values().forEach(PrivateRedis::close);
                    }
                };
            }
            case "postgresql": {
                PostgresServerUrl pg = o.postgres();
                if (pg == null) {
                    report.note("no --postgres URL: the PostgreSQL rows are skipped");
                    return null;
                }
                return new Kind() {
                    private final Map<String, String> databases = new LinkedHashMap<>();
                    private final String run =
                            UUID.randomUUID().toString().replace("-", "").substring(0, 8);

                    public String name() {
                        return "postgresql";
                    }

                    public String newStore(String tag) throws IOException {
                        String db = "fence_scale_" + run + "_" + tag;
                        pg.create(db);
                        String url = pg.storeUrl(db);
                        databases.put(url, db);
                        return url;
                    }

                    public Seeder seeder(String url) throws IOException {
                        return SqlSeeder.postgres(pg, databases.get(url));
                    }

                    public void close() {
                        databases.values().forEach(pg::drop);
                    }
                };
            }
            default:
                throw new InvalidInputException("unknown store " + kind);
        }
    }

    private static LeaseStore open(String url) {
        return Stores.open(url, StoreOptions.defaults());
    }

    /** Store size, ledger queries, refs per push and retention: one empty and one seeded store. */
    private static void storeRows(Kind k, Sizes sizes, ScaleReport report, PrintWriter progress) throws Exception {
        String name = k.name();
        progress.println(name + ": two stores, one to stay empty and one to seed");
        String baseUrl = k.newStore("base");
        String bigUrl = k.newStore("big");
        Supplier<StoreIdentity> candidate = Identities.candidates(Clock.systemUTC());
        try (StoreProbe base = new StoreProbe(open(baseUrl));
                StoreProbe big = new StoreProbe(open(bigUrl));
                Seeder seeder = k.seeder(bigUrl);
                Seeder empty = k.seeder(baseUrl)) {
            StoreIdentity id = big.store.identity(candidate.get());
            long start = System.currentTimeMillis();
            // Seeded events are dated within the minutes before the run, so a one-day query matches them all.
            long t0 = start - 2 * sizes.events().get(sizes.events().size() - 1) - 60_000;
            progress.println(name + ": warming up");
            paired(base, big, 3, sizes.perBlock() * 3);
            long leases = 1;
            report.size(measure(name, 1, 0, base, big, sizes, seeder, empty));
            for (long target : sizes.leases().subList(1, sizes.leases().size())) {
                progress.println(name + ": seeding leased branches to " + ScaleReport.count(target));
                seeder.leases(leases, target, id.generation(), id.floor(), start);
                leases = target;
                report.size(measure(name, leases, 0, base, big, sizes, seeder, empty));
            }
            long events = 0;
            for (long target : sizes.events().subList(1, sizes.events().size())) {
                progress.println(name + ": seeding ledger events to " + ScaleReport.count(target));
                seeder.events(events, target, t0);
                events = target;
                report.size(measure(name, leases, events, base, big, sizes, seeder, empty));
            }
            queries(name, big.store, events, report, progress);
            refsPerPush(name, base, sizes, report, progress);
            retention(k, base, sizes, report, progress);
        }
    }

    /**
     * How long a row waits after seeding before it measures. Right after a bulk load the calls on both stores
     * ran slower for a second or two (the bench's JVM and the servers clearing up after millions of
     * pipelined commands), unevenly between the stores: measured at once, Redis's 1M-event row read 1.8x in
     * runs where the same row measured 3 s later read 1.0x. A store that grew to this size over months has
     * nothing of the kind to clear up.
     */
    static final Duration SETTLE_PAUSE = Duration.ofSeconds(3);

    /**
     * One store-size row: both stores settled ({@link Seeder#settle}) and left for {@link #SETTLE_PAUSE},
     * a round of calls on each to warm up, then verdicts and acquires in alternating blocks on the empty and
     * the seeded store.
     */
    private static ScaleReport.SizeRow measure(
            String name,
            long leases,
            long events,
            StoreProbe base,
            StoreProbe big,
            Sizes sizes,
            Seeder seeded,
            Seeder empty)
            throws IOException {
        seeded.settle();
        empty.settle();
        try {
            Thread.sleep(SETTLE_PAUSE.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while the stores settled");
        }
        paired(base, big, 1, sizes.perBlock());
        double[][] r = paired(base, big, sizes.rounds(), sizes.perBlock());
        return new ScaleReport.SizeRow(
                name,
                leases,
                events,
                Stats.of(r[0]),
                Stats.of(r[1]),
                Stats.of(r[2]),
                Stats.of(r[3]),
                ratioInterval(r[1], r[0], sizes.rounds(), sizes.perBlock()),
                ratioInterval(r[3], r[2], sizes.rounds(), sizes.perBlock()));
    }

    /**
     * The 95 % interval of {@code median(seeded) / median(empty)} over {@code rounds} rounds of {@code perBlock}
     * calls on each ({@link #paired}): a round's two blocks are resampled together, as they ran side by side.
     */
    static Bootstrap.Interval ratioInterval(double[] seeded, double[] empty, int rounds, int perBlock) {
        return Bootstrap.interval(rounds, picked -> {
            int[] at = Bootstrap.blocks(picked, perBlock);
            return Bootstrap.median(seeded, at) / Bootstrap.median(empty, at);
        });
    }

    /**
     * {@code rounds} rounds of a block of verdicts and a block of acquires on each store, which store goes
     * first alternating by round; returns the verdict times (empty, seeded) and acquire times (empty, seeded).
     */
    static double[][] paired(StoreProbe base, StoreProbe big, int rounds, int perBlock) throws IOException {
        int n = rounds * perBlock;
        double[][] out = new double[4][n];
        int at = 0;
        for (int round = 0; round < rounds; round++) {
            StoreProbe first = round % 2 == 0 ? base : big;
            StoreProbe second = first == base ? big : base;
            for (StoreProbe p : new StoreProbe[] {first, second}) {
                int v = p == base ? 0 : 1;
                for (int i = 0; i < perBlock; i++) {
                    out[v][at + i] = p.verdict();
                }
                for (int i = 0; i < perBlock; i++) {
                    out[v + 2][at + i] = p.acquire();
                }
            }
            at += perBlock;
        }
        return out;
    }

    /** The ledger queries of {@code fence audit}, as its command line builds them. */
    private static void queries(String name, LeaseStore store, long events, ScaleReport report, PrintWriter progress) {
        progress.println(name + ": ledger queries over " + ScaleReport.count(events) + " events");
        Instant day = Instant.now().minus(Duration.ofDays(1));
        Set<EventType> all = Set.of();
        query(
                name,
                store,
                events,
                "audit --repo R --since 1d",
                new LedgerQuery(null, Seeded.queriedRepo(), null, null, day, all, 1000),
                report);
        query(
                name,
                store,
                events,
                "audit --repo R --since 1d --limit 10",
                new LedgerQuery(null, Seeded.queriedRepo(), null, null, day, all, 10),
                report);
        query(
                name,
                store,
                events,
                "audit --resource R --limit 0",
                new LedgerQuery(Seeded.queriedResource(), null, null, null, null, all, 0),
                report);
        query(
                name,
                store,
                events,
                "audit timeline --resource R",
                new LedgerQuery(Seeded.queriedResource(), null, null, null, null, null, 0),
                report);
    }

    private static void query(
            String name, LeaseStore store, long events, String label, LedgerQuery q, ScaleReport report) {
        int runs = 5;
        double[] ms = new double[runs];
        int returned = 0;
        for (int i = 0; i < runs; i++) {
            long start = System.nanoTime();
            List<LedgerEvent> got = store.query(q);
            ms[i] = (System.nanoTime() - start) / 1e6;
            returned = got.size();
        }
        report.query(new ScaleReport.QueryRow(name, events, label, q.limit(), returned, Stats.of(ms)));
    }

    /** One push of each size, against a push of one branch beside it. */
    private static void refsPerPush(
            String name, StoreProbe probe, Sizes sizes, ScaleReport report, PrintWriter progress) throws IOException {
        int round = 0;
        for (int refs : sizes.refs()) {
            int fenced = Math.max(1, refs / 2);
            int tags = refs - fenced;
            int runs = refs >= 10_000 ? 3 : 5;
            progress.println(name + ": pushes of " + refs + " refs (" + fenced + " fenced)");
            double[] ms = new double[runs];
            double[] one = new double[runs * 5];
            for (int i = 0; i < runs; i++) {
                for (int j = 0; j < 5; j++) {
                    one[i * 5 + j] = probe.push("one" + round++, 1, 0);
                }
                ms[i] = probe.push("p" + round++, fenced, tags);
            }
            report.refs(new ScaleReport.RefsRow(name, refs, fenced, Stats.of(ms), Stats.of(one)));
        }
    }

    /**
     * A third store, seeded with the largest ledger dated two days back, then given a retention of one day:
     * every seeded event is past it. Verdicts on it (whose writes trim the ledger) are timed beside verdicts
     * on the empty store until the ledger has been trimmed or the verdicts run out.
     */
    private static void retention(Kind k, StoreProbe base, Sizes sizes, ScaleReport report, PrintWriter progress)
            throws IOException {
        String name = k.name();
        long events = sizes.events().get(sizes.events().size() - 1);
        String url = k.newStore("trim");
        Supplier<StoreIdentity> candidate = Identities.candidates(Clock.systemUTC());
        try (LeaseStore store = open(url);
                Seeder seeder = k.seeder(url)) {
            store.identity(candidate.get());
            progress.println(name + ": seeding " + ScaleReport.count(events) + " events two days old");
            seeder.events(
                    0, events, System.currentTimeMillis() - Duration.ofDays(2).toMillis());
            seeder.settle();
            try (StoreProbe trimmed = new StoreProbe(store)) {
                long before = seeder.events();
                progress.println(name + ": retention to 1 day; verdicts while " + ScaleReport.count(before)
                        + " events are trimmed");
                store.retention(Duration.ofDays(1), "fence bench", Instant.now(), candidate);
                List<Double> during = new ArrayList<>();
                List<Double> empty = new ArrayList<>();
                long left = before;
                while (during.size() < sizes.trimVerdicts() && left > 1000) {
                    for (int i = 0; i < 50; i++) {
                        during.add(trimmed.verdict());
                        empty.add(base.verdict());
                    }
                    left = seeder.events();
                }
                report.trim(new ScaleReport.TrimRow(name, before, left, Stats.of(during), Stats.of(empty)));
                if (left > 1000) {
                    report.note(name + ": the trim had not finished after " + during.size() + " verdicts (" + left
                            + " events left)");
                }
            }
        }
    }

    /** Verdicts through an in-process fence serve on a new store of this kind, at each concurrency. */
    private static void concurrency(Kind k, Sizes sizes, Path work, ScaleReport report, PrintWriter progress)
            throws Exception {
        String url = k.newStore("serve");
        Path credentials = work.resolve("credentials-" + k.name());
        String credential = CredentialsFile.add(credentials, "bench-hook", Role.HOOK, List.of(), new SecureRandom());
        try (HookServer server = Bench.startServer(url, credentials);
                LeaseStore store = open(url)) {
            LeaseService leases = new LeaseService(store, Clock.systemUTC());
            progress.println(k.name() + ": warming fence serve until the JIT is quiet (at most "
                    + sizes.clientWarmup().toSeconds() + " s)");
            // Every row's branches are created before the warm-up, so that the rows measure fast-forwards only:
            // a row's first verdicts would otherwise be creations the compiled code has not seen, and the JIT
            // would recompile (deoptimise) inside the row.
            Map<Integer, List<VerdictLoad>> rows = new LinkedHashMap<>();
            for (int clients : sizes.clients()) {
                rows.put(clients, primed(loads(leases, server, credential, "conc-" + clients, clients)));
            }
            report.note(k.name() + ": "
                    + warm(primed(loads(leases, server, credential, "warm", 16)), sizes.clientWarmup()));
            for (Map.Entry<Integer, List<VerdictLoad>> row : rows.entrySet()) {
                progress.println(k.name() + ": fence serve, " + row.getKey() + " concurrent hooks");
                report.concurrency(load(k.name(), row.getValue(), Duration.ofSeconds(1), sizes.clientTime()));
            }
            // The same server's bare exchange at the target's concurrency, right after its verdicts.
            int clients = ScaleReport.TARGET_CLIENTS;
            progress.println(k.name() + ": fence serve, " + clients + " concurrent /healthz exchanges");
            List<ExchangeLoad> exchanges = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                exchanges.add(new ExchangeLoad(server.uri()));
            }
            report.exchange(load(k.name(), exchanges, Duration.ofSeconds(1), sizes.clientTime()));
        }
    }

    /** {@code clients} verdict loads, each on a branch of its own repository under a live lease. */
    static List<VerdictLoad> loads(
            LeaseService leases, HookServer server, String credential, String prefix, int clients) {
        List<VerdictLoad> loads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            loads.add(
                    new VerdictLoad(VerdictClient.leased(leases, server.uri(), credential, prefix + "-" + i, "bench")));
        }
        return loads;
    }

    /** The loads, each after its first verdict: the creation of its branch. */
    static List<VerdictLoad> primed(List<VerdictLoad> loads) throws IOException {
        for (VerdictLoad load : loads) {
            load.verdict();
        }
        return loads;
    }

    /** The JIT's share of one warm-up window below which the server counts as warm. */
    static final double QUIET_JIT_SHARE = 0.03;

    /**
     * Sends verdicts from {@code loads} in 2 s windows until the JIT compiles for less than {@link
     * #QUIET_JIT_SHARE} of a window (or {@code most} has passed): a long-running server has compiled its
     * hot paths, and rows measured while the compiler still takes a core's share would measure the
     * compiler. On two cores under this load that takes about 40 s; the first row alone is no warm-up.
     *
     * @return what the warm-up did, for the report's notes
     */
    static String warm(List<VerdictLoad> loads, Duration most) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            load("warm-up", loads, Duration.ZERO, most);
            return "fence serve warmed for " + most.toSeconds() + " s (this JVM does not report its JIT's time)";
        }
        Duration window = Duration.ofSeconds(2);
        long start = System.nanoTime();
        long verdicts = 0;
        double share = 1;
        while (System.nanoTime() - start < most.toNanos()) {
            long before = jit.getTotalCompilationTime();
            verdicts += load("warm-up", loads, Duration.ZERO, window).accepted();
            share = (jit.getTotalCompilationTime() - before) / (double) window.toMillis();
            if (share < QUIET_JIT_SHARE) {
                break;
            }
        }
        return String.format(
                Locale.ROOT,
                "fence serve warmed for %.0f s (%d verdicts from %d clients) until the JIT compiled for %.1f %% of"
                        + " a 2 s window%s",
                (System.nanoTime() - start) / 1e9,
                verdicts,
                loads.size(),
                share * 100,
                share < QUIET_JIT_SHARE ? "" : " (still above " + QUIET_JIT_SHARE * 100 + " %: the rows include JIT)");
    }

    /** Where {@link #load} reads the machine's and this process's CPU times ({@link CpuShare}). */
    private static final Path PROC = Path.of("/proc");

    /**
     * Every load sends verdicts back to back: {@code warmup} uncounted, then {@code time} counted, over which
     * the row also reads where the CPU went ({@link CpuShare}): the clients' threads time themselves from their
     * first counted request.
     */
    static ScaleReport.ConcurrencyRow load(
            String name, List<? extends LoadClient> loads, Duration warmup, Duration time) throws InterruptedException {
        int n = loads.size();
        List<List<Double>> accepted = new ArrayList<>();
        List<List<Double>> refused = new ArrayList<>();
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(n);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        boolean timed = threads.isCurrentThreadCpuTimeSupported() && threads.isThreadCpuTimeEnabled();
        AtomicLong clientNanos = new AtomicLong();
        long begin = System.nanoTime() + warmup.toNanos();
        long end = begin + time.toNanos();
        for (int i = 0; i < n; i++) {
            List<Double> a = new ArrayList<>();
            List<Double> r = new ArrayList<>();
            accepted.add(a);
            refused.add(r);
            LoadClient load = loads.get(i);
            Thread t = new Thread(
                    () -> {
                        long cpuFrom = -1;
                        try {
                            while (true) {
                                long s = System.nanoTime();
                                if (s >= end) {
                                    break;
                                }
                                boolean counted = s >= begin;
                                if (counted && cpuFrom < 0 && timed) {
                                    cpuFrom = threads.getCurrentThreadCpuTime();
                                }
                                try {
                                    VerdictClient.Answer answer = load.attempt();
                                    double ms = (System.nanoTime() - s) / 1e6;
                                    if (counted) {
                                        (answer.accepted() ? a : r).add(ms);
                                    }
                                } catch (IOException e) {
                                    if (counted) {
                                        errors.incrementAndGet();
                                        firstError.compareAndSet(null, e.getMessage());
                                    }
                                }
                            }
                        } finally {
                            if (cpuFrom >= 0) {
                                clientNanos.addAndGet(threads.getCurrentThreadCpuTime() - cpuFrom);
                            }
                            done.countDown();
                        }
                    },
                    "bench-hook-" + i);
            t.setDaemon(true);
            t.start();
        }
        sleepUntil(begin);
        CpuShare.Times before = CpuShare.take(PROC);
        sleepUntil(end);
        CpuShare.Times after = CpuShare.take(PROC);
        done.await();
        List<Double> a = new ArrayList<>();
        List<Double> r = new ArrayList<>();
        accepted.forEach(a::addAll);
        refused.forEach(r::addAll);
        return new ScaleReport.ConcurrencyRow(
                name,
                n,
                time.toNanos() / 1e9,
                a.size(),
                r.size(),
                errors.get(),
                Stats.of(a),
                Stats.of(r),
                firstError.get(),
                timed ? CpuShare.between(before, after, clientNanos.get(), a.size() + r.size()) : null);
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        for (long left; (left = nanoTime - System.nanoTime()) > 0; ) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }

    /**
     * The largest push as git makes it: {@code git push} of that many new refs to a local bare repository
     * whose pre-receive hook is the Java hook on a SQLite store, beside the same push to one with no hook.
     */
    private static void wholePush(
            Kind k, Sizes sizes, Map<String, String> env, Path work, ScaleReport report, PrintWriter progress)
            throws IOException {
        int refs = sizes.refs().get(sizes.refs().size() - 1);
        int fenced = Math.max(1, refs / 2);
        progress.println(k.name() + ": git push of " + refs + " refs through the Java hook");
        Map<String, String> gitEnv = Bench.gitEnv(env, work);
        String url = k.newStore("push");
        Path jdk = Path.of(System.getProperty("java.home"));
        Bench.Build build = new Bench.Build(null, Bench.thisJar());
        String hook = Bench.javaHook(build, jdk, url);
        String postReceive = Bench.javaHook(build, jdk, url, "post-receive");
        Path repos = work.resolve("push-repos");
        Files.createDirectories(repos);
        Path hooked = bare(repos, "hooked", gitEnv, hook, url);
        // Both hooks, as fence install --bare installs them: post-receive records the push's landings.
        Bench.recordLanded(hooked, postReceive, gitEnv);
        Path plain = bare(repos, "plain", gitEnv, null, null);
        Path clone = repos.resolve("clone");
        Procs.check(repos, gitEnv, List.of("git", "init", "-q", "--initial-branch=main", clone.toString()));
        Procs.check(clone, gitEnv, List.of("git", "commit", "-q", "--allow-empty", "-m", "seed"));
        String sha = Procs.check(clone, gitEnv, List.of("git", "rev-parse", "HEAD"));
        int runs = 3;
        double[] withHook = new double[runs];
        double[] without = new double[runs];
        for (int i = 0; i < runs; i++) {
            String prefix = "p" + i;
            StringBuilder stdin = new StringBuilder();
            for (int b = 0; b < fenced; b++) {
                stdin.append("create refs/heads/")
                        .append(prefix)
                        .append("/b")
                        .append(b)
                        .append(' ')
                        .append(sha)
                        .append('\n');
            }
            for (int t = 0; t < refs - fenced; t++) {
                stdin.append("create refs/tags/")
                        .append(prefix)
                        .append("/t")
                        .append(t)
                        .append(' ')
                        .append(sha)
                        .append('\n');
            }
            Path input = repos.resolve("refs-" + i);
            Files.writeString(input, stdin, StandardCharsets.UTF_8);
            Procs.check(clone, gitEnv, List.of("sh", "-c", "git update-ref --stdin < '" + input + "'"));
            for (Path bare : i % 2 == 0 ? List.of(hooked, plain) : List.of(plain, hooked)) {
                Procs.Outcome o = Procs.run(
                        clone,
                        gitEnv,
                        List.of(
                                "git",
                                "push",
                                "-q",
                                bare.toString(),
                                "refs/heads/" + prefix + "/*:refs/heads/" + prefix + "/*",
                                "refs/tags/" + prefix + "/*:refs/tags/" + prefix + "/*"),
                        120);
                if (o.exit() != 0) {
                    throw new IOException("the push of " + refs + " refs failed: "
                            + o.output().trim());
                }
                (bare == hooked ? withHook : without)[i] = o.nanos() / 1e6;
            }
        }
        report.push(new ScaleReport.PushRow(k.name(), refs, fenced, Stats.of(withHook), Stats.of(without)));
    }

    private static Path bare(Path dir, String name, Map<String, String> gitEnv, String hook, String url)
            throws IOException {
        Path bare = dir.resolve(name + ".git");
        Procs.check(dir, gitEnv, List.of("git", "init", "-q", "--bare", bare.toString()));
        if (hook != null) {
            Files.writeString(bare.resolve("fence.conf"), "store = " + url + "\n", StandardCharsets.UTF_8);
            Path h = bare.resolve("hooks").resolve("pre-receive");
            Files.writeString(h, hook, StandardCharsets.UTF_8);
            h.toFile().setExecutable(true);
        }
        return bare;
    }

    private static Map<String, Object> machine(Options o, Map<String, String> env) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("date", Instant.now().toString());
        m.put("cpu", Bench.cpuModel());
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("loadAtStart", Bench.loadAverage());
        m.put("java", System.getProperty("java.version"));
        m.put("sizes", o.quick() ? "quick" : "full");
        m.put("stores", o.stores());
        if (o.postgres() != null) {
            m.put("postgres", o.postgres().describe());
        }
        return m;
    }
}
