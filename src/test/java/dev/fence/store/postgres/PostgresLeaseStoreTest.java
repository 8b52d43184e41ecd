package dev.fence.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.EventType;
import dev.fence.core.Identities;
import dev.fence.core.InternalException;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.StoreIdentity;
import dev.fence.core.StoreUnavailableException;
import dev.fence.store.LeaseStoreContractTest;
import dev.fence.store.StoreOptions;
import dev.fence.store.StoreSetup;
import dev.fence.store.Stores;
import dev.fence.testing.Futures;
import dev.fence.testing.PostgresServer;
import dev.fence.testing.ProcessTest;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The store contract against a real PostgreSQL: the machine's server when it answers on 127.0.0.1:5432,
 * else a private one ({@link PostgresServer#shared()}), in a database of this class's own that is dropped
 * after it. Each test starts without the schema, as on a new database.
 */
@ProcessTest
class PostgresLeaseStoreTest extends LeaseStoreContractTest {
    private static PostgresServer server;
    private static String database;

    @BeforeAll
    static void createDatabase() {
        server = PostgresServer.shared();
        database = server.createDatabase();
    }

    @AfterAll
    static void dropDatabase() {
        if (database != null) {
            server.dropDatabase(database);
        }
    }

    /** Runs before the base class closes its stores (whose connections are idle by then). */
    @AfterEach
    void dropTheSchema() {
        sql("DROP SCHEMA IF EXISTS fence CASCADE");
        sql("DROP SCHEMA IF EXISTS backup CASCADE");
    }

    private static String url() {
        return server.url(database);
    }

    /** With the test's clock deciding lease and ledger times, as the contract's tests need. */
    @Override
    protected LeaseStore openStore(StoreOptions options) {
        return PostgresLeaseStore.open(url(), options.withCallerClock());
    }

    @Test
    void aLeaseIsLiveOrNotByTheDatabasesClockWhateverTheCallersSays() {
        try (LeaseStore own = PostgresLeaseStore.open(url(), StoreOptions.defaults())) {
            Clock real = Clock.systemUTC();
            new LeaseService(own, real).acquire("live", "alice", Duration.ofMinutes(2), null);
            for (Duration skew : List.of(Duration.ofDays(365), Duration.ofDays(-365))) {
                var status = new LeaseService(own, Clock.offset(real, skew)).status("live");
                assertNotNull(status.liveLease(), "a client " + skew + " off still sees alice's lease as live");
            }
            Instant db = own.now().orElseThrow();
            assertTrue(Duration.between(Instant.now(), db).abs().toSeconds() < 60, "clock: " + db);
        }
    }

    /** Drops the schema under the open stores, as a restore into an empty database would leave them. */
    @Override
    protected void loseAllData() {
        sql("DROP SCHEMA fence CASCADE");
    }

    @Override
    protected void forgetResource(String resource) {
        sql("DELETE FROM fence.resources WHERE resource = '" + resource.replace("'", "''") + "'");
    }

    /** Ends every session of the open stores, as a server restart does: their pooled connections break. */
    @Override
    protected void restartBackend() {
        sql("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
                + " WHERE datname = current_database() AND pid <> pg_backend_pid()");
    }

    @Override
    protected boolean pacesPruning() {
        return true;
    }

    @Override
    protected boolean floorsFromOwnClock() {
        return true;
    }

    private static void sql(String statement) {
        server.execute(database, statement);
    }

    private static String query(String statement) {
        return server.queryString(database, statement);
    }

    /**
     * Waits (at most 10 s) until a session of this database waits for a lock, as a blocked store call does;
     * asked from the {@code postgres} database, which no test gives a statement timeout.
     */
    private static void awaitALockWait() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while ("0"
                .equals(server.queryString(
                        "postgres",
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = '" + database
                                + "' AND wait_event_type = 'Lock'"))) {
            assertTrue(System.nanoTime() < deadline, "no store call came to wait for the lock");
            Thread.sleep(10);
        }
    }

    private static StoreUnavailableException assertUnavailable(String named, Executable call) {
        StoreUnavailableException e = assertThrows(StoreUnavailableException.class, call);
        assertTrue(e.getMessage().contains(named), () -> "message names " + named + ": " + e.getMessage());
        return e;
    }

    @Nested
    class Server {
        @Test
        void describeIsTheUrlWithoutThePassword() {
            String withPassword = url().replace("postgres@", "postgres:s3cr%40t@");
            try (LeaseStore s = PostgresLeaseStore.open(withPassword, StoreOptions.defaults())) {
                s.identity(candidate);

                assertEquals(url().replace("postgres@", "postgres:***@"), s.describe());
                assertFalse(s.describe().contains("s3cr"), s::describe);
            }
            assertEquals(url(), store.describe());
        }

        @Test
        void storesOpensBothSchemesWithOptions() {
            String postgres = url().replace("postgresql://", "postgres://") + "?timeout=1s&retention=7d";
            try (LeaseStore s = Stores.open(postgres, StoreOptions.defaults())) {
                assertInstanceOf(PostgresLeaseStore.class, s);
                assertEquals(url(), s.describe());
                AcquireResult.Granted g = assertInstanceOf(
                        AcquireResult.Granted.class, s.acquire(MAIN, "alice", TTL, clock.instant(), null, candidate));
                assertEquals(s.identity(candidate).nextToken(0, g.grantedAt().toEpochMilli()), g.token());
            }
        }

        @Test
        void theFirstFloorIsTheDatabasesClockNotTheCandidates() {
            StoreIdentity slow = Identities.candidate(Instant.ofEpochMilli(5));
            long before = System.currentTimeMillis();

            StoreIdentity made = store.identity(slow);

            assertEquals(slow.generation(), made.generation());
            long dbNow = Long.parseLong(query("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"));
            assertTrue(
                    made.floor() >= (before - 60_000) * 1000 && made.floor() <= dbNow * 1000,
                    () -> "floor " + made.floor());
            assertEquals(made.floor(), StoreIdentity.floorAt(made.createdAt().toEpochMilli()));
            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "alice", TTL, clock.instant(), null, slow));
            assertEquals(made.nextToken(0, g.grantedAt().toEpochMilli()), g.token());
        }

        @Test
        void withoutACallerClockTheDatabasesClockDecides() {
            try (LeaseStore s = PostgresLeaseStore.open(url(), StoreOptions.defaults())) {
                long before = System.currentTimeMillis();
                AcquireResult.Granted g = assertInstanceOf(
                        AcquireResult.Granted.class,
                        s.acquire(MAIN, "alice", TTL, Instant.parse("2100-01-01T00:00:00Z"), null, candidate));
                s.append(List.of(event(Instant.EPOCH, EventType.REJECT, DEV, "bob", 1, "stale-token")));
                long after = System.currentTimeMillis();

                // The database runs on this machine's clock.
                assertTrue(g.grantedAt().toEpochMilli() >= before - 5000, g::toString);
                assertTrue(g.grantedAt().toEpochMilli() <= after + 5000, g::toString);
                assertEquals(g.grantedAt().plusMillis(TTL), g.expiresAt());
                List<LedgerEvent> events = s.query(LedgerQuery.all());
                assertEquals(2, events.size(), "a 1970 event is not past a 90-day retention: " + events);
                for (LedgerEvent e : events) {
                    assertTrue(Math.abs(e.at().toEpochMilli() - g.grantedAt().toEpochMilli()) < 5000, e::toString);
                }
            }
        }

        @Test
        void aNewTimelineStartsANewGenerationAboveEveryTokenAndVoidsLeases() {
            AcquireResult.Granted alice = grant(MAIN, "alice");
            ResourceState before = state(MAIN);
            // As a promotion does: only the timeline differs (the row is rewritten by fence's own rules).
            sql("UPDATE fence.identity SET timeline = timeline + 1, written_xid = txid_current()");
            StoreIdentity next = Identities.candidate(clock.instant());

            AcquireResult.Granted bob = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "bob", TTL, clock.instant(), null, next));

            assertEquals(next.generation(), bob.generation());
            assertNull(bob.previous(), "alice's live lease belongs to the old generation");
            assertTrue(bob.token() > alice.token());
            assertTrue(store.identity(next).floor() >= alice.token());
            assertEquals(
                    new LeaseCheck.Refused(bob.token(), state(MAIN).lease()),
                    store.renew(MAIN, "alice", alice.token(), TTL, clock.instant()));
            assertTrue(state(MAIN).version() - before.version() > 1L << 31, "versions moved out of reach");
            ResourceWrite oldGeneration = new ResourceWrite(
                    MAIN, state(MAIN).version(), bob.token(), 0, false, 0, null, null, null, alice.generation());
            assertEquals(new CommitResult.Conflict(MAIN), store.commit(List.of(oldGeneration), List.of()));
            // A snapshot from before the switch (the version) conflicts even under the new generation's id.
            ResourceWrite oldVersion = new ResourceWrite(
                    MAIN, before.version() + 1, bob.token(), 0, false, 0, null, null, null, bob.generation());
            assertEquals(new CommitResult.Conflict(MAIN), store.commit(List.of(oldVersion), List.of()));
        }

        @Test
        void anotherClusterStartsANewGeneration() {
            long old = grant(MAIN, "alice").token();
            sql("UPDATE fence.identity SET system_identifier = 42, written_xid = txid_current()");
            StoreIdentity next = Identities.candidate(clock.instant());

            StoreIdentity now = store.identity(next);

            assertEquals(next.generation(), now.generation());
            assertTrue(now.floor() >= old);
            assertNull(state(MAIN).lease());
        }

        @Test
        void readsNoticeTheNewGenerationToo() {
            grant(MAIN, "alice");
            sql("UPDATE fence.identity SET timeline = timeline + 1, written_xid = txid_current()");
            StoreIdentity next = Identities.candidate(clock.instant());

            LeaseStore.IdentifiedSnapshot read = store.identityAndSnapshot(List.of(MAIN), () -> next);

            assertEquals(next.generation(), read.identity().generation());
            assertNull(read.states().get(MAIN).lease());
        }

        @Test
        void aLogicalRestoreOfOlderDataStartsANewGenerationAboveEveryTokenEverGranted() throws Exception {
            long first = grant(MAIN, "alice").token();
            sql("CREATE SCHEMA backup");
            for (String table : List.of("identity", "resources", "events")) {
                sql("CREATE TABLE backup." + table + " AS TABLE fence." + table);
            }
            long highest = 0;
            for (int i = 0; i < 5; i++) {
                clock.advance(Duration.ofMillis(TTL));
                highest = grant(MAIN, "agent-" + i).token();
            }
            Thread.sleep(10);
            // What restoring yesterday's dump does: the same values, written anew.
            sql("TRUNCATE fence.identity, fence.resources, fence.events");
            sql("INSERT INTO fence.identity SELECT * FROM backup.identity");
            sql("INSERT INTO fence.resources SELECT * FROM backup.resources");
            sql("INSERT INTO fence.events OVERRIDING SYSTEM VALUE SELECT * FROM backup.events");
            assertEquals(
                    Long.toString(first), query("SELECT latest_granted FROM fence.resources"), "the counter went back");
            clock.advance(Duration.ofMillis(TTL));
            StoreIdentity next = Identities.candidate(clock.instant());

            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "carol", TTL, clock.instant(), null, next));

            assertEquals(next.generation(), g.generation());
            assertTrue(g.token() > highest, g.token() + " > " + highest);
        }

        @Test
        void deletingTheIdentityRowStartsANewGenerationAboveTheCountersItLeaves() {
            AcquireResult.Granted alice = grant(MAIN, "alice");
            ResourceState before = state(MAIN);
            sql("DELETE FROM fence.identity");
            StoreIdentity next = Identities.candidate(clock.instant());

            AcquireResult.Granted bob = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "bob", TTL, clock.instant(), null, next));

            assertEquals(next.generation(), bob.generation());
            assertNull(bob.previous());
            assertTrue(bob.token() > alice.token());
            assertTrue(state(MAIN).version() - before.version() > 1L << 31, "versions moved out of reach");
        }

        @Test
        void freezingTheIdentityRowKeepsTheGeneration() {
            StoreIdentity first = store.identity(candidate);
            sql("VACUUM (FREEZE) fence.identity");
            sql("VACUUM FULL fence.identity");

            assertEquals(first, store.identity(Identities.candidate(clock.instant())));
        }

        @Test
        void manyCallersThatFindTheMarkerChangedStartOneGenerationBetweenThem() throws Exception {
            grant(MAIN, "alice");
            sql("UPDATE fence.identity SET timeline = timeline + 1, written_xid = txid_current()");
            List<LeaseStore> stores = List.of(store, open(StoreOptions.defaults()));
            int threads = 8;
            CyclicBarrier barrier = new CyclicBarrier(threads);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<StoreIdentity>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    LeaseStore mine = stores.get(t % 2);
                    results.add(pool.submit(() -> {
                        barrier.await(30, TimeUnit.SECONDS);
                        return mine.identity(Identities.candidate(clock.instant()));
                    }));
                }
                Set<String> generations = new HashSet<>();
                for (Future<StoreIdentity> f : results) {
                    generations.add(f.get(60, TimeUnit.SECONDS).generation());
                }
                assertEquals(1, generations.size(), generations::toString);
                assertNotEquals(candidate.generation(), generations.iterator().next());
            } finally {
                pool.shutdownNow();
            }
        }

        @Test
        void aRowLockHeldPastTheTimeoutIsUnavailableAndThenClears() throws Exception {
            LeaseStore s = open(new StoreOptions(Duration.ofMillis(300), Duration.ofDays(90), 0, Duration.ZERO));
            grant(MAIN, "alice");
            clock.advance(Duration.ofMillis(TTL));
            try (Connection c = server.connect(database);
                    Statement st = c.createStatement()) {
                c.setAutoCommit(false);
                st.execute("SELECT * FROM fence.resources FOR UPDATE");

                long start = System.nanoTime();
                StoreUnavailableException e =
                        assertUnavailable(url(), () -> s.acquire(MAIN, "bob", TTL, clock.instant(), null, candidate));
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

                assertTrue(waited >= 250 && waited < 3000, "waited " + waited + " ms for a 300 ms timeout");
                assertTrue(e.getMessage().contains("timeout"), e::getMessage);
                c.rollback();
            }
            assertInstanceOf(
                    AcquireResult.Granted.class, s.acquire(MAIN, "bob", TTL, clock.instant(), null, candidate));
        }

        @Test
        void aDatabaseDefaultStatementTimeoutDoesNotApplyToFencesSessions() throws Exception {
            grant(MAIN, "alice");
            clock.advance(Duration.ofMillis(TTL));
            sql("ALTER DATABASE " + database + " SET statement_timeout = '20ms'");
            try {
                LeaseStore s = open(StoreOptions.defaults());
                try (Connection c = server.connect(database);
                        Statement st = c.createStatement()) {
                    c.setAutoCommit(false);
                    st.execute("SET LOCAL statement_timeout = 0");
                    st.execute("SELECT * FROM fence.resources FOR UPDATE");
                    ExecutorService caller = Executors.newSingleThreadExecutor();
                    try {
                        Future<AcquireResult> waiting =
                                caller.submit(() -> s.acquire(MAIN, "bob", TTL, clock.instant(), null, candidate));
                        awaitALockWait();
                        c.commit();

                        assertInstanceOf(AcquireResult.Granted.class, waiting.get(10, TimeUnit.SECONDS));
                    } finally {
                        caller.shutdownNow();
                    }
                }
            } finally {
                sql("ALTER DATABASE " + database + " RESET statement_timeout");
            }
        }

        @Test
        void aClosedPortIsUnavailableQuickly() throws Exception {
            int port;
            try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = socket.getLocalPort();
            }
            String nowhere = "postgresql://postgres@127.0.0.1:" + port + "/" + database;
            long start = System.nanoTime();
            try (LeaseStore s = PostgresLeaseStore.open(
                    nowhere, new StoreOptions(Duration.ofMillis(500), Duration.ofDays(1), 0, Duration.ZERO))) {
                StoreUnavailableException e = assertUnavailable("127.0.0.1:" + port, () -> s.identity(candidate));
                assertTrue(e.getMessage().contains("cannot reach"), e::getMessage);
            }
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 3000);
        }

        @Test
        void aMissingDatabaseIsNamed() {
            try (LeaseStore s = PostgresLeaseStore.open(server.url("fence_no_such_db"), StoreOptions.defaults())) {
                StoreUnavailableException e = assertUnavailable("fence_no_such_db", () -> s.identity(candidate));
                assertTrue(e.getMessage().contains("does not exist"), e::getMessage);
            }
        }

        @Test
        void anotherProgramsSchemaNamedFenceIsRefusedAndLeftAlone() {
            store.close();
            sql("DROP SCHEMA IF EXISTS fence CASCADE");
            sql("CREATE SCHEMA fence");
            sql("CREATE TABLE fence.customers (id integer PRIMARY KEY)");

            try (LeaseStore s = PostgresLeaseStore.open(url(), StoreOptions.defaults())) {
                StoreUnavailableException e = assertUnavailable(url(), () -> s.identity(candidate));
                assertTrue(e.getMessage().contains("another program"), e::getMessage);
            }
            assertEquals("1", query("SELECT count(*) FROM pg_tables WHERE schemaname = 'fence'"));
        }

        @Test
        void anEmptySchemaMadeByAnAdministratorIsUsed() {
            store.close();
            sql("DROP SCHEMA IF EXISTS fence CASCADE");
            sql("CREATE SCHEMA fence");

            try (LeaseStore s = PostgresLeaseStore.open(url(), StoreOptions.defaults())) {
                assertMadeFrom(candidate, s.identity(candidate));
            }
        }

        @Test
        void aStoreFromANewerFenceIsRefused() {
            store.identity(candidate);
            sql("UPDATE fence.schema_info SET version = 99");

            try (LeaseStore s = PostgresLeaseStore.open(url(), StoreOptions.defaults())) {
                StoreUnavailableException e = assertUnavailable(url(), () -> s.query(LedgerQuery.all()));
                assertTrue(e.getMessage().contains("newer fence"), e::getMessage);
            }
        }

        @Test
        void aServerWithoutASynchronousStandbyIsWarnedAbout() {
            String names = server.setting("postgres", "synchronous_standby_names");
            List<String> warnings = ((PostgresLeaseStore) store).warnings();

            assertEquals(names.isBlank(), warnings.stream().anyMatch(w -> w.contains("synchronous_standby_names")));
        }

        @Test
        void durabilityNamesEachWeakSettingWithItsFix() {
            assertEquals(List.of(), unsafe("on", "*"));
            assertEquals(List.of(), unsafe("remote_apply", "ANY 1 (a, b)"));
            assertEquals(List.of(), unsafe("remote_write", "s1"));
            assertEquals(List.of("synchronous_commit"), names(unsafe("local", "*")));
            StoreSetup.Setting off = unsafe("off", "*").get(0);
            assertTrue(off.detail().contains("'off'") && off.detail().contains("its own disk"), off::detail);
            assertEquals(
                    "ALTER ROLE fence IN DATABASE \"Fence\" SET synchronous_commit = on (or remote_apply; it"
                            + " overrides postgresql.conf, the database's and the role's value)",
                    off.fix());
            assertEquals(List.of("synchronous_standby_names"), names(unsafe("on", "")));
            assertEquals(List.of("synchronous_commit", "synchronous_standby_names"), names(unsafe("local", " ")));
            for (StoreSetup.Setting safe : PostgresLeaseStore.durability("on", "*", "fence", "fence")) {
                assertNull(safe.fix(), safe::toString);
            }
        }

        private static List<StoreSetup.Setting> unsafe(String synchronousCommit, String standbyNames) {
            return new StoreSetup.Postgres(
                            "postgresql://fence@db/Fence",
                            "on",
                            PostgresLeaseStore.durability(synchronousCommit, standbyNames, "fence", "\"Fence\""))
                    .unsafe();
        }

        private static List<String> names(List<StoreSetup.Setting> settings) {
            return settings.stream().map(StoreSetup.Setting::name).toList();
        }

        /**
         * A database that acknowledges commits before its disk has them ({@code off}) or before a standby has
         * them ({@code local}) would let a crash or failover take back grants unnoticed: fence's own sessions
         * commit with {@code on} there (a stronger setting is kept), and the database's setting is still
         * named, with its fix, for the sessions that are not fence's. Reading it creates nothing.
         */
        @Test
        void aDatabaseThatCommitsWithoutWaitingIsOverruledInFencesSessionsAndStillNamed() {
            String own = server.createDatabase();
            try {
                String ownUrl = server.url(own);
                StoreSetup.Postgres inspected = (StoreSetup.Postgres) Stores.inspect(ownUrl, StoreOptions.defaults());
                assertEquals("on", inspected.sessionSynchronousCommit());
                assertNull(server.queryString(own, "SELECT to_regnamespace('fence')"), "inspecting made no schema");

                for (String weak : List.of("off", "local", "remote_apply")) {
                    server.execute("postgres", "ALTER DATABASE " + own + " SET synchronous_commit = " + weak);
                    // One connection, as a hook has: the session that made the grant is the one asked.
                    try (PostgresLeaseStore s = PostgresLeaseStore.open(
                            ownUrl, StoreOptions.defaults().withSingleConnection(true))) {
                        assertInstanceOf(
                                AcquireResult.Granted.class,
                                s.acquire(MAIN, "alice", TTL, clock.instant(), null, candidate));
                        StoreSetup.Postgres setup = s.setup();

                        boolean raised = !weak.equals("remote_apply");
                        assertEquals(raised ? "on" : weak, setup.sessionSynchronousCommit(), weak);
                        List<String> named = names(setup.unsafe());
                        assertEquals(raised, named.contains("synchronous_commit"), weak + ": " + named);
                        if (raised) {
                            String warning = s.warnings().get(0);
                            assertTrue(warning.startsWith("synchronous_commit is '" + weak + "'"), warning);
                            assertTrue(
                                    warning.endsWith("; ALTER ROLE postgres IN DATABASE " + own
                                            + " SET synchronous_commit = on (or remote_apply; it overrides"
                                            + " postgresql.conf, the database's and the role's value)"),
                                    warning);
                        }
                    }
                }
            } finally {
                server.dropDatabase(own);
            }
        }
    }

    @Nested
    class GroupCommit {
        private final ExecutorService pool = Executors.newCachedThreadPool();

        @AfterEach
        void stopPool() {
            pool.shutdownNow();
        }

        private <T> T outcome(Future<T> f) throws Exception {
            return Futures.outcome(f);
        }

        /**
         * Another session's transaction that has run {@code statement} (a lock to hold), rolled back when
         * closed.
         */
        private Held holding(String statement) throws SQLException {
            Connection c = server.connect(database);
            try (Statement st = c.createStatement()) {
                c.setAutoCommit(false);
                st.execute(statement);
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
            return () -> {
                try (c) {
                    c.rollback();
                }
            };
        }

        /** A lock another session holds, given up when closed. */
        private interface Held {
            void close() throws SQLException;
        }

        /** Waits (at most 10 s) until {@code n} commits are queued behind the one holding the store. */
        private void awaitQueued(PostgresLeaseStore s, int n) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (s.queuedCommits() < n) {
                assertTrue(System.nanoTime() < deadline, "only " + s.queuedCommits() + " of " + n + " commits queued");
                Thread.sleep(5);
            }
        }

        @Test
        void commitsQueuedTogetherShareATransactionAndEachGetsItsOwnOutcome() throws Exception {
            PostgresLeaseStore s = (PostgresLeaseStore) store;
            int callers = 8;
            List<AcquireResult.Granted> grants = new ArrayList<>();
            List<ResourceState> states = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                grants.add(grant("db/r" + i, "agent-" + i));
                states.add(state("db/r" + i));
            }
            AcquireResult.Granted held = grant(MAIN, "alice");
            ResourceState main = state(MAIN);
            List<LedgerEvent> mainLedger = ledger(MAIN);
            ResourceWrite lowering = new ResourceWrite(
                    MAIN,
                    main.version(),
                    held.token() - 1,
                    0,
                    false,
                    0,
                    null,
                    null,
                    null,
                    store.identity(candidate).generation());
            List<Future<CommitResult>> good = new ArrayList<>();
            Future<CommitResult> twice;
            Future<CommitResult> lowered;
            Future<CommitResult> first;
            // The first commit waits for this row lock, holding the store; the rest queue behind it.
            Held lock = holding("SELECT * FROM fence.resources WHERE resource = 'db/r0' FOR UPDATE");
            try {
                first = pool.submit(() -> store.commit(
                        List.of(acceptedWrite(states.get(0), grants.get(0), null)),
                        List.of(event(
                                clock.instant(),
                                EventType.ACCEPT,
                                "db/r0",
                                "agent-0",
                                grants.get(0).token(),
                                "first"))));
                awaitALockWait();
                for (int i = 1; i < callers; i++) {
                    int k = i;
                    good.add(pool.submit(() -> store.commit(
                            List.of(acceptedWrite(states.get(k), grants.get(k), null)),
                            List.of(event(
                                    clock.instant(),
                                    EventType.ACCEPT,
                                    "db/r" + k,
                                    "agent-" + k,
                                    grants.get(k).token(),
                                    null)))));
                }
                // The same write as the first one's: it must see the first one's and conflict.
                twice = pool.submit(
                        () -> store.commit(List.of(acceptedWrite(states.get(0), grants.get(0), null)), List.of()));
                lowered = pool.submit(() -> store.commit(
                        List.of(lowering),
                        List.of(event(clock.instant(), EventType.ACCEPT, MAIN, "mallory", held.token(), null))));
                awaitQueued(s, callers + 1);
            } finally {
                lock.close();
            }

            assertInstanceOf(CommitResult.Committed.class, outcome(first));
            for (int i = 1; i < callers; i++) {
                assertInstanceOf(CommitResult.Committed.class, outcome(good.get(i - 1)));
                assertEquals(states.get(i).version() + 1, state("db/r" + i).version());
                assertEquals(
                        List.of(EventType.GRANT, EventType.ACCEPT),
                        ledger("db/r" + i).stream().map(LedgerEvent::type).toList(),
                        "each commit is kept with its event");
            }
            assertEquals(new CommitResult.Conflict("db/r0"), outcome(twice));
            InternalException e = assertThrows(InternalException.class, () -> outcome(lowered));
            assertTrue(e.getMessage().contains("would lower the tokens"), e.getMessage());
            assertEquals(main, state(MAIN), "the lowering commit wrote nothing");
            assertEquals(mainLedger, ledger(MAIN), "nor an event");
            assertEquals(
                    "1",
                    query("SELECT count(DISTINCT xmin::text) FROM fence.resources WHERE resource LIKE 'db/r%'"
                            + " AND resource <> 'db/r0'"),
                    "the queued commits shared one transaction");
        }

        @Test
        void aCommitTheSchemaRefusesFailsAloneAndTheOthersAreKept() throws Exception {
            PostgresLeaseStore s = (PostgresLeaseStore) store;
            AcquireResult.Granted g0 = grant("db/r0", "agent-0");
            AcquireResult.Granted g1 = grant("db/r1", "agent-1");
            ResourceState s0 = state("db/r0");
            ResourceState s1 = state("db/r1");
            LedgerEvent nameless = new LedgerEvent(
                    0, clock.instant(), EventType.ACCEPT, null, null, null, "x", "x", 0, null, null, null, null);
            Future<CommitResult> first;
            Future<CommitResult> broken;
            Future<CommitResult> kept;
            Held lock = holding("SELECT * FROM fence.resources WHERE resource = 'db/r0' FOR UPDATE");
            try {
                first = pool.submit(() -> store.commit(List.of(acceptedWrite(s0, g0, null)), List.of()));
                awaitALockWait();
                broken = pool.submit(() -> store.commit(List.of(), List.of(nameless)));
                kept = pool.submit(() -> store.commit(
                        List.of(acceptedWrite(s1, g1, null)),
                        List.of(event(clock.instant(), EventType.ACCEPT, "db/r1", "agent-1", g1.token(), null))));
                awaitQueued(s, 2);
            } finally {
                lock.close();
            }

            assertInstanceOf(CommitResult.Committed.class, outcome(first));
            StoreUnavailableException notNull = assertThrows(StoreUnavailableException.class, () -> outcome(broken));
            assertTrue(notNull.getMessage().contains("null value"), notNull.getMessage());
            assertInstanceOf(CommitResult.Committed.class, outcome(kept));
            assertEquals(s1.version() + 1, state("db/r1").version());
            assertEquals(
                    List.of(EventType.GRANT, EventType.ACCEPT),
                    ledger("db/r1").stream().map(LedgerEvent::type).toList());
        }

        @Test
        void aCommitQueuedForMostOfItsTimeoutIsAnsweredBusyAndDoesNotShortenTheOthers() throws Exception {
            // A timeout of 4 s: the lock is let go once the early commit has queued for more than three quarters
            // of it (3.3 s of its call), which leaves the first commit, begun a little before, some 0.6 s of its
            // own to commit in.
            PostgresLeaseStore s = (PostgresLeaseStore)
                    open(new StoreOptions(Duration.ofSeconds(4), Duration.ofDays(90), 0, Duration.ZERO));
            AcquireResult.Granted g0 = grant("db/r0", "agent-0");
            AcquireResult.Granted g1 = grant("db/r1", "agent-1");
            AcquireResult.Granted g2 = grant("db/r2", "agent-2");
            ResourceState s0 = state("db/r0");
            ResourceState s1 = state("db/r1");
            ResourceState s2 = state("db/r2");
            Future<CommitResult> first;
            Future<CommitResult> early;
            Future<CommitResult> late;
            Held lock = holding("SELECT * FROM fence.resources WHERE resource = 'db/r0' FOR UPDATE");
            try {
                first = pool.submit(() -> s.commit(List.of(acceptedWrite(s0, g0, null)), List.of()));
                awaitALockWait();
                CountDownLatch earlyCalled = new CountDownLatch(1);
                early = pool.submit(() -> {
                    earlyCalled.countDown();
                    return s.commit(List.of(acceptedWrite(s1, g1, null)), List.of());
                });
                // Timed from the early commit's call, not from when it was handed to a thread.
                assertTrue(earlyCalled.await(30, TimeUnit.SECONDS), "the early commit was never made");
                Thread.sleep(3300);
                late = pool.submit(() -> s.commit(List.of(acceptedWrite(s2, g2, null)), List.of()));
                awaitQueued(s, 2);
            } finally {
                lock.close();
            }

            assertInstanceOf(CommitResult.Committed.class, outcome(first));
            StoreUnavailableException busy = assertThrows(StoreUnavailableException.class, () -> outcome(early));
            assertTrue(busy.getMessage().contains("busy"), busy.getMessage());
            assertEquals(s1, state("db/r1"), "the commit answered busy wrote nothing");
            assertInstanceOf(CommitResult.Committed.class, outcome(late));
            assertEquals(s2.version() + 1, state("db/r2").version());
        }

        @Test
        void functionsDroppedUnderARunningStoreAreMadeAgain() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            ResourceState s = state(MAIN);
            sql("DROP FUNCTION fence.commit_1, fence.append_1");

            assertInstanceOf(
                    CommitResult.Committed.class,
                    store.commit(
                            List.of(acceptedWrite(s, g, null)),
                            List.of(event(clock.instant(), EventType.ACCEPT, MAIN, "alice", g.token(), null))));
            assertEquals(s.version() + 1, state(MAIN).version());
        }

        /** Runs {@code reads} while another session holds the resources table, so they queue behind the first. */
        private <T> List<Future<T>> queuedBehindATableLock(List<java.util.concurrent.Callable<T>> reads)
                throws Exception {
            PostgresLeaseStore s = (PostgresLeaseStore) store;
            List<Future<T>> out = new ArrayList<>();
            Held lock = holding("LOCK TABLE fence.resources IN ACCESS EXCLUSIVE MODE");
            try {
                out.add(pool.submit(reads.get(0)));
                awaitALockWait();
                for (java.util.concurrent.Callable<T> r : reads.subList(1, reads.size())) {
                    out.add(pool.submit(r));
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (s.queuedReads() < reads.size() - 1) {
                    assertTrue(System.nanoTime() < deadline, "only " + s.queuedReads() + " reads queued");
                    Thread.sleep(5);
                }
            } finally {
                lock.close();
            }
            return out;
        }

        @Test
        void snapshotsQueuedTogetherEachGetTheirOwnResources() throws Exception {
            grant("db/r0", "agent-0");
            grant("db/r1", "agent-1");
            AcquireResult.Granted g2 = grant("db/r2", "agent-2");
            ResourceState s2 = state("db/r2");
            assertInstanceOf(
                    CommitResult.Committed.class, store.commit(List.of(acceptedWrite(s2, g2, null)), List.of()));
            Map<String, ResourceState> expected = new java.util.HashMap<>();
            for (String r : List.of("db/r0", "db/r1", "db/r2", "db/never")) {
                expected.put(r, state(r));
            }
            List<List<String>> asked = List.of(
                    List.of("db/r0"),
                    List.of("db/r2", "db/r0"),
                    List.of("db/never"),
                    List.of("db/r1", "db/never", "db/r2"),
                    List.of(),
                    List.of("db/r1"));
            List<java.util.concurrent.Callable<LeaseStore.IdentifiedSnapshot>> reads = new ArrayList<>();
            for (List<String> names : asked) {
                reads.add(() -> store.identityAndSnapshot(names, () -> candidate));
            }

            List<Future<LeaseStore.IdentifiedSnapshot>> answers = queuedBehindATableLock(reads);

            for (int i = 0; i < asked.size(); i++) {
                LeaseStore.IdentifiedSnapshot read = outcome(answers.get(i));
                assertEquals(
                        store.identity(candidate).generation(), read.identity().generation());
                assertEquals(asked.get(i), List.copyOf(read.states().keySet()), "each caller gets its names, in order");
                for (String name : asked.get(i)) {
                    assertEquals(expected.get(name), read.states().get(name), name);
                }
            }
        }

        @Test
        void snapshotsQueuedTogetherThatFindANewGenerationEachReadItAlone() throws Exception {
            grant(MAIN, "alice");
            StoreIdentity next = Identities.candidate(clock.instant());
            sql("UPDATE fence.identity SET timeline = timeline + 1, written_xid = txid_current()");
            List<java.util.concurrent.Callable<LeaseStore.IdentifiedSnapshot>> reads = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                reads.add(() -> store.identityAndSnapshot(List.of(MAIN), () -> next));
            }

            List<Future<LeaseStore.IdentifiedSnapshot>> answers = queuedBehindATableLock(reads);

            for (Future<LeaseStore.IdentifiedSnapshot> f : answers) {
                LeaseStore.IdentifiedSnapshot read = outcome(f);
                assertEquals(next.generation(), read.identity().generation());
                assertNull(read.states().get(MAIN).lease(), "the old generation's lease is void");
            }
            assertEquals(next.generation(), store.identity(candidate).generation(), "one new generation");
        }

        @Test
        void aStoreMadeBeforeTheFunctionsGetsThemFromTheNextFence() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            ResourceState s = state(MAIN);
            sql("DROP FUNCTION fence.commit_1, fence.append_1");
            try (LeaseStore next = open(StoreOptions.defaults())) {
                assertInstanceOf(
                        CommitResult.Committed.class,
                        next.commit(
                                List.of(acceptedWrite(s, g, null)),
                                List.of(event(clock.instant(), EventType.ACCEPT, MAIN, "alice", g.token(), null))));
            }
            assertEquals(s.version() + 1, state(MAIN).version());
        }
    }
}
