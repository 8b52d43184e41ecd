package dev.fence.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcquireResult;
import dev.fence.core.Actor;
import dev.fence.core.AdmissionService;
import dev.fence.core.EventType;
import dev.fence.core.FencePolicy;
import dev.fence.core.Grant;
import dev.fence.core.HostKind;
import dev.fence.core.Identities;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.PushAttempt;
import dev.fence.core.PushOptions;
import dev.fence.core.Reason;
import dev.fence.core.RefUpdate;
import dev.fence.core.Resources;
import dev.fence.core.StoreUnavailableException;
import dev.fence.core.Verdict;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.PostgresServer;
import dev.fence.testing.ProcessTest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Failover of the PostgreSQL store under load, on servers the test makes itself on loopback: a primary
 * ({@code initdb}) and a standby of it ({@code pg_basebackup -R}). Four clients run acquire, push (the
 * admission rule's commit) and release cycles against the primary, through a URL that lists both servers;
 * the test kills the primary with SIGKILL mid-load, promotes the standby ({@code pg_ctl promote}), and the
 * clients go on against it.
 *
 * <p>With a synchronous standby every grant a client was told of survives; with an asynchronous one that
 * fell behind some do not, and the store notices the new timeline: a new generation, whose tokens are
 * above every token granted before and under which old proofs are void. Either way no token is granted
 * twice within a generation and no client ever sees a token lower than one granted before its call began.
 */
@ProcessTest
class PostgresFailoverIT {
    private static final String DATABASE = "fence";
    private static final String REPO = "app";
    private static final List<String> REFS = List.of("refs/heads/main", "refs/heads/dev");
    private static final int CLIENTS = 4;
    private static final Duration LOAD = Duration.ofMillis(1500);
    private static final StoreOptions OPTIONS =
            new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(1), 0, Duration.ZERO);

    private final List<PostgresServer> servers = new ArrayList<>();

    @AfterEach
    void stopServers() {
        servers.forEach(PostgresServer::close);
    }

    /**
     * One grant a client was told of.
     *
     * @param client which client
     * @param startNanos when its acquire began
     * @param ackNanos when the grant came back
     */
    record Granted(int client, Grant grant, long startNanos, long ackNanos) {}

    /** The clients and what they saw. */
    private static final class Load implements AutoCloseable {
        final List<Granted> grants = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger unavailable = new AtomicInteger();
        final AtomicInteger accepted = new AtomicInteger();
        final AtomicInteger refusedOldGeneration = new AtomicInteger();
        private final ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        private final List<Future<?>> running = new ArrayList<>();
        private final List<LeaseStore> stores = new ArrayList<>();
        private volatile boolean stop;

        Load(String url) {
            for (int i = 0; i < CLIENTS; i++) {
                int client = i;
                LeaseStore store = Stores.open(url, OPTIONS);
                stores.add(store);
                running.add(pool.submit(() -> {
                    cycles(client, store);
                    return null;
                }));
            }
        }

        private void cycles(int client, LeaseStore store) throws InterruptedException {
            LeaseService leases = new LeaseService(store, Clock.systemUTC());
            AdmissionService admission = new AdmissionService(store, FencePolicy.defaults(), Clock.systemUTC());
            String ref = REFS.get(client % REFS.size());
            String resource = Resources.forRef(REPO, ref);
            String holder = "client-" + client;
            int n = 0;
            while (!stop) {
                try {
                    long start = System.nanoTime();
                    if (!(leases.acquire(resource, holder, Duration.ofSeconds(10), null)
                            instanceof LeaseService.AcquireOutcome.Acquired a)) {
                        Thread.sleep(1);
                        continue;
                    }
                    grants.add(new Granted(client, a.grant(), start, System.nanoTime()));
                    String sha = String.format(Locale.ROOT, "%08x", client) + String.format("%032x", ++n);
                    PushAttempt push = new PushAttempt(
                            REPO,
                            new Actor(holder, HostKind.PLAIN, null),
                            new PushOptions(
                                    OptionalLong.of(a.grant().token()),
                                    a.grant().proof(),
                                    List.of()),
                            List.of(new RefUpdate("0".repeat(40), sha, ref)));
                    Verdict v = admission.admit(push, (x, y) -> true);
                    if (v.accepted()) {
                        accepted.incrementAndGet();
                    } else if (v.refusals().get(0).fenced().reason() == Reason.OLD_GENERATION) {
                        refusedOldGeneration.incrementAndGet();
                    }
                    leases.release(
                            resource, holder, a.grant().token(), a.grant().proof());
                } catch (StoreUnavailableException e) {
                    unavailable.incrementAndGet();
                    Thread.sleep(20);
                }
            }
        }

        /** Grants acknowledged so far. */
        int count() {
            return grants.size();
        }

        /** A copy of the grants acknowledged so far (the clients keep adding to the list). */
        List<Granted> granted() {
            synchronized (grants) {
                return List.copyOf(grants);
            }
        }

        @Override
        public void close() throws Exception {
            stop = true;
            try {
                for (Future<?> f : running) {
                    f.get(30, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
                stores.forEach(LeaseStore::close);
            }
        }
    }

    /** A primary that waits for no standby yet (it has none: a commit would wait for ever). */
    private PostgresServer primary() {
        Map<String, String> settings = new HashMap<>();
        settings.put("wal_level", "replica");
        settings.put("synchronous_commit", "on");
        PostgresServer primary = PostgresServer.startPrivate(settings);
        servers.add(primary);
        primary.execute("postgres", "CREATE DATABASE " + DATABASE);
        return primary;
    }

    /**
     * A standby of {@code primary}, which then waits for it when {@code synchronous}. Once promoted, the standby
     * waits for no standby of its own (as Patroni does when none is left).
     */
    private PostgresServer standby(PostgresServer primary, boolean synchronous) throws InterruptedException {
        PostgresServer standby = primary.startStandby(Map.of());
        servers.add(standby);
        if (synchronous) {
            primary.execute("postgres", "ALTER SYSTEM SET synchronous_standby_names = '*'");
            primary.execute("postgres", "SELECT pg_reload_conf()");
        }
        String expectedSyncState = synchronous ? "sync" : "async";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!expectedSyncState.equals(
                primary.queryString("postgres", "SELECT string_agg(sync_state, ',') FROM pg_stat_replication"))) {
            assertTrue(System.nanoTime() < deadline, "the standby never became " + expectedSyncState);
            Thread.sleep(50);
        }
        return standby;
    }

    private static String url(PostgresServer primary, PostgresServer standby) {
        return "postgresql://postgres@127.0.0.1:" + primary.port() + ",127.0.0.1:" + standby.port() + "/" + DATABASE;
    }

    private static void awaitGrants(Load load, int atLeast, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (load.count() < atLeast) {
            assertTrue(System.nanoTime() < deadline, "only " + load.count() + " grants, wanted " + atLeast);
            Thread.sleep(10);
        }
    }

    /** Within each generation, each (resource, token) was granted once. */
    private static void assertNoTokenTwice(List<Granted> grants) {
        Map<String, Granted> seen = new HashMap<>();
        for (Granted g : grants) {
            String key = g.grant().generation() + " " + g.grant().resource() + " "
                    + g.grant().token();
            Granted earlier = seen.put(key, g);
            assertTrue(earlier == null, () -> "token granted twice: " + earlier + " and " + g);
        }
    }

    /** A grant that came back before another acquire began has the lower token. */
    private static void assertTokensNeverGoBack(List<Granted> grants) {
        for (Granted a : grants) {
            for (Granted b : grants) {
                if (a.grant().resource().equals(b.grant().resource()) && a.ackNanos() < b.startNanos()) {
                    assertTrue(
                            a.grant().token() < b.grant().token(),
                            () -> "token went back: " + a + " acknowledged before " + b + " began");
                }
            }
        }
    }

    private static Set<String> grantsInLedger(LeaseStore store) {
        Set<String> out = new HashSet<>();
        for (LedgerEvent e : store.query(new LedgerQuery(null, null, null, null, null, Set.of(EventType.GRANT), 0))) {
            out.add(e.resource() + " " + e.token() + " " + e.holder());
        }
        return out;
    }

    private static String key(Granted g) {
        return g.grant().resource() + " " + g.grant().token() + " " + g.grant().holder();
    }

    /** Fails over mid-load and returns the grants acknowledged before and after, and the figures. */
    private record Run(
            List<Granted> before,
            List<Granted> after,
            String oldGeneration,
            Load load,
            long outageMillis,
            long promoteMillis,
            long afterPromotionMillis) {}

    private Run failOver(PostgresServer primary, PostgresServer standby, Runnable beforeKill) throws Exception {
        String oldGeneration;
        try (LeaseStore first = Stores.open(url(primary, standby), OPTIONS)) {
            oldGeneration = first.identity(Identities.candidate(Instant.now())).generation();
        }
        Load load = new Load(url(primary, standby));
        try (load) {
            awaitGrants(load, 20, Duration.ofSeconds(20));
            beforeKill.run();
            Thread.sleep(LOAD.toMillis());
            int atKill = load.count();
            long killed = System.nanoTime();
            primary.kill();
            long promoting = System.nanoTime();
            standby.promote();
            long promoted = System.nanoTime();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (load.granted().stream()
                    .noneMatch(g ->
                            g.ackNanos() > killed && !g.grant().generation().equals(oldGeneration))) {
                assertTrue(System.nanoTime() < deadline, "no grant after the promotion\n" + standby.log());
                Thread.sleep(10);
            }
            long firstAfter = load.granted().stream()
                    .filter(g ->
                            g.ackNanos() > killed && !g.grant().generation().equals(oldGeneration))
                    .mapToLong(Granted::ackNanos)
                    .min()
                    .getAsLong();
            Thread.sleep(LOAD.toMillis());
            load.close();
            List<Granted> all = load.granted();
            List<Granted> before = all.stream()
                    .filter(g -> g.grant().generation().equals(oldGeneration))
                    .toList();
            List<Granted> after = all.stream()
                    .filter(g -> !g.grant().generation().equals(oldGeneration))
                    .toList();
            assertTrue(before.size() >= atKill, before.size() + " >= " + atKill);
            assertNoTokenTwice(all);
            assertTokensNeverGoBack(all);
            return new Run(
                    before,
                    after,
                    oldGeneration,
                    load,
                    TimeUnit.NANOSECONDS.toMillis(firstAfter - killed),
                    TimeUnit.NANOSECONDS.toMillis(promoted - promoting),
                    TimeUnit.NANOSECONDS.toMillis(firstAfter - promoted));
        }
    }

    private static void assertOldProofsAreVoid(LeaseStore store, Granted old) {
        LeaseService leases = new LeaseService(store, Clock.systemUTC());
        Grant g = old.grant();
        LeaseService.CheckOutcome renew =
                leases.renew(g.resource(), g.holder(), g.token(), g.proof(), Duration.ofSeconds(10));
        assertEquals(
                Reason.OLD_GENERATION,
                assertInstanceOf(LeaseService.CheckOutcome.Lost.class, renew)
                        .fenced()
                        .reason());
        String ref = Resources.parse(g.resource()).orElseThrow().ref();
        PushAttempt push = new PushAttempt(
                REPO,
                new Actor(g.holder(), HostKind.PLAIN, null),
                new PushOptions(OptionalLong.of(g.token()), g.proof(), List.of()),
                List.of(new RefUpdate("0".repeat(40), "e".repeat(40), ref)));
        Verdict v = new AdmissionService(store, FencePolicy.defaults(), Clock.systemUTC()).admit(push, (a, d) -> true);
        assertEquals(Reason.OLD_GENERATION, v.refusals().get(0).fenced().reason());
    }

    @Test
    void aSynchronousStandbyPromotedMidLoadKeepsEveryAcknowledgedGrant() throws Exception {
        long started = System.nanoTime();
        PostgresServer primary = primary();
        PostgresServer standby = standby(primary, true);
        try (PostgresLeaseStore s = PostgresLeaseStore.open(url(primary, standby), OPTIONS)) {
            assertEquals(List.of(), s.warnings(), "a synchronous standby makes grants durable");
        }

        Run run = failOver(primary, standby, () -> {});

        try (LeaseStore after = PostgresLeaseStore.open(standby.url(DATABASE), OPTIONS)) {
            Set<String> kept = grantsInLedger(after);
            List<Granted> lost =
                    run.before().stream().filter(g -> !kept.contains(key(g))).toList();
            assertEquals(List.of(), lost, "acknowledged grants lost in the failover");
            for (String ref : REFS) {
                String resource = Resources.forRef(REPO, ref);
                long highestBefore = run.before().stream()
                        .filter(g -> g.grant().resource().equals(resource))
                        .mapToLong(g -> g.grant().token())
                        .max()
                        .orElse(0);
                long lowestAfter = run.after().stream()
                        .filter(g -> g.grant().resource().equals(resource))
                        .mapToLong(g -> g.grant().token())
                        .min()
                        .orElse(Long.MAX_VALUE);
                assertTrue(lowestAfter > highestBefore, resource + ": " + lowestAfter + " > " + highestBefore);
            }
            assertOldProofsAreVoid(after, run.before().get(run.before().size() - 1));
        }
        assertTrue(run.load().accepted.get() > 0, "pushes were admitted");
        System.out.printf(
                Locale.ROOT,
                "synchronous standby: %d grants acknowledged before the kill, all kept; %d after the promotion;"
                        + " first new grant %d ms after the kill, %d ms after pg_ctl promote returned (it took %d"
                        + " ms); %d calls unavailable meanwhile; %d pushes admitted; %.1f s in all%n",
                run.before().size(),
                run.after().size(),
                run.outageMillis(),
                run.afterPromotionMillis(),
                run.promoteMillis(),
                run.load().unavailable.get(),
                run.load().accepted.get(),
                (System.nanoTime() - started) / 1e9);
    }

    @Test
    void anAsynchronousStandbyThatFellBehindStartsANewGenerationAboveEveryToken() throws Exception {
        long started = System.nanoTime();
        PostgresServer primary = primary();
        PostgresServer standby = standby(primary, false);
        try (PostgresLeaseStore s = PostgresLeaseStore.open(url(primary, standby), OPTIONS)) {
            assertTrue(s.warnings().stream().anyMatch(w -> w.contains("synchronous_standby_names")), () -> s.warnings()
                    .toString());
        }

        // The standby stops receiving WAL: the grants after this point exist only on the primary.
        Run run = failOver(primary, standby, () -> {
            standby.execute("postgres", "ALTER SYSTEM SET primary_conninfo = ''");
            standby.execute("postgres", "SELECT pg_reload_conf()");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!"0".equals(primary.queryString("postgres", "SELECT count(*) FROM pg_stat_replication"))) {
                assertTrue(System.nanoTime() < deadline, "the standby kept streaming");
                Thread.onSpinWait();
            }
        });

        try (LeaseStore after = PostgresLeaseStore.open(standby.url(DATABASE), OPTIONS)) {
            Set<String> kept = grantsInLedger(after);
            long lost =
                    run.before().stream().filter(g -> !kept.contains(key(g))).count();
            assertTrue(lost > 0, "the standby had fallen behind");
            for (String ref : REFS) {
                String resource = Resources.forRef(REPO, ref);
                long highestBefore = run.before().stream()
                        .filter(g -> g.grant().resource().equals(resource))
                        .mapToLong(g -> g.grant().token())
                        .max()
                        .orElse(0);
                long lowestAfter = run.after().stream()
                        .filter(g -> g.grant().resource().equals(resource))
                        .mapToLong(g -> g.grant().token())
                        .min()
                        .orElse(Long.MAX_VALUE);
                assertTrue(lowestAfter > highestBefore, resource + ": " + lowestAfter + " > " + highestBefore);
            }
            assertFalse(run.after().isEmpty());
            assertOldProofsAreVoid(after, run.before().get(run.before().size() - 1));
            System.out.printf(
                    Locale.ROOT,
                    "asynchronous standby: %d grants acknowledged before the kill, %d of them lost; %d after the"
                            + " promotion, all above; first new grant %d ms after the kill, %d ms after pg_ctl"
                            + " promote returned (it took %d ms); %.1f s in all%n",
                    run.before().size(),
                    lost,
                    run.after().size(),
                    run.outageMillis(),
                    run.afterPromotionMillis(),
                    run.promoteMillis(),
                    (System.nanoTime() - started) / 1e9);
        }
    }

    @Test
    void aCommitTheStandbyNeverConfirmedIsNotAGrant() throws Exception {
        PostgresServer primary = primary();
        String url = primary.url(DATABASE);
        try (LeaseStore s = PostgresLeaseStore.open(url, OPTIONS)) {
            s.identity(Identities.candidate(Instant.now()));
        }
        // A synchronous standby is named, and none ever connects: every commit waits for it.
        primary.execute("postgres", "ALTER SYSTEM SET synchronous_standby_names = 'nobody'");
        primary.execute("postgres", "SELECT pg_reload_conf()");

        // The grant does not come back within the timeout.
        try (LeaseStore s = PostgresLeaseStore.open(
                url, new StoreOptions(Duration.ofMillis(700), Duration.ofDays(1), 0, Duration.ZERO))) {
            long start = System.nanoTime();
            assertThrows(
                    StoreUnavailableException.class,
                    () -> s.acquire(
                            Resources.forRef(REPO, REFS.get(1)),
                            "a",
                            10_000,
                            Instant.now(),
                            null,
                            Identities.candidate(Instant.now())));
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waited < 3000, "waited " + waited + " ms for a 700 ms timeout");
        }
        primary.execute(
                "postgres",
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE wait_event = 'SyncRep'");

        // An administrator cancels the wait: PostgreSQL keeps the commit and says so only in a warning.
        String resource = Resources.forRef(REPO, REFS.get(0));
        try (LeaseStore s = PostgresLeaseStore.open(
                url, new StoreOptions(Duration.ofSeconds(20), Duration.ofDays(1), 0, Duration.ZERO))) {
            ExecutorService caller = Executors.newSingleThreadExecutor();
            try {
                Future<AcquireResult> acquire = caller.submit(() ->
                        s.acquire(resource, "b", 10_000, Instant.now(), null, Identities.candidate(Instant.now())));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                String waiting = null;
                while (waiting == null) {
                    assertTrue(System.nanoTime() < deadline, "no commit waited for the standby");
                    waiting = primary.queryString(
                            "postgres", "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'");
                    Thread.sleep(10);
                }
                primary.execute("postgres", "SELECT pg_cancel_backend(" + waiting + ")");

                Exception e = assertThrows(Exception.class, () -> acquire.get(10, TimeUnit.SECONDS));
                StoreUnavailableException cause = assertInstanceOf(StoreUnavailableException.class, e.getCause());
                assertTrue(cause.getMessage().contains("not acknowledged"), cause::getMessage);
            } finally {
                caller.shutdownNow();
            }
        }
        assertNotNull(
                primary.queryString(
                        DATABASE, "SELECT latest_granted FROM fence.resources WHERE resource = '" + resource + "'"),
                "the primary kept the cancelled commit");
    }
}
