package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.EventType;
import dev.fence.core.Identities;
import dev.fence.core.InternalException;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.StoreIdentity;
import dev.fence.core.StoreUnavailableException;
import dev.fence.store.LeaseStoreContractTest;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.Futures;
import dev.fence.testing.ProcessTest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

class SqliteLeaseStoreTest extends LeaseStoreContractTest {
    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("state/fence.db");
    }

    @Override
    protected LeaseStore openStore(StoreOptions options) {
        return SqliteLeaseStore.open(file(), options.withCallerClock());
    }

    @Override
    protected void forgetResource(String resource) throws SQLException {
        try (Connection c = raw();
                java.sql.PreparedStatement st = c.prepareStatement("DELETE FROM resources WHERE resource = ?")) {
            st.setString(1, resource);
            st.executeUpdate();
        }
    }

    /** Deletes the file under the open stores, as an operator cleaning up (or a lost disk) would. */
    @Override
    protected void loseAllData() throws IOException {
        for (String suffix : List.of("", "-wal", "-shm")) {
            Files.deleteIfExists(Path.of(file() + suffix));
        }
    }

    private Connection raw() throws SQLException {
        return DriverManager.getConnection("jdbc:sqlite:" + file());
    }

    private static String queryString(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private void grantIn(LeaseStore s) {
        assertInstanceOf(AcquireResult.Granted.class, s.acquire(MAIN, "alice", TTL, clock.instant(), null, candidate));
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    private static Path beside(Path file, String suffix) {
        return file.resolveSibling(file.getFileName() + suffix);
    }

    private StoreUnavailableException assertUnavailable(Path named, Executable call) {
        StoreUnavailableException e = assertThrows(StoreUnavailableException.class, call);
        assertTrue(e.getMessage().contains(named.toString()), () -> "message names " + named + ": " + e.getMessage());
        return e;
    }

    @Nested
    class File {
        @Test
        void aFileOfSchemaOneIsUpgradedInPlaceAndKeepsItsData() throws Exception {
            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire("r", "alice", 30_000, clock.instant(), null, candidate));
            try (Connection c = raw();
                    Statement st = c.createStatement()) {
                st.execute("DROP TABLE settings");
                st.execute("PRAGMA user_version = 1");
            }
            try (SqliteLeaseStore s = SqliteLeaseStore.open(file(), StoreOptions.defaults())) {
                assertEquals(Duration.ofDays(90), s.retention(() -> candidate));
                assertEquals(g.token(), s.snapshot(List.of("r")).get("r").latestGranted());
            }
            try (Connection c = raw();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("PRAGMA user_version")) {
                assertTrue(rs.next());
                assertEquals(2, rs.getInt(1));
            }
        }

        /**
         * The file holds the proof key: a new one, the {@code -wal} and {@code -shm} files SQLite makes beside
         * it (with the database's mode) and each directory made for it are the owner's alone, whatever the
         * umask would let others read.
         */
        @Test
        void aNewFileItsLogAndItsDirectoriesAreTheOwnersAlone() throws Exception {
            Path created = dir.resolve("made/for/it/fence.db");

            try (SqliteLeaseStore s = SqliteLeaseStore.open(created, StoreOptions.defaults())) {
                grantIn(s);
                assertEquals("rw-------", mode(created));
                assertEquals("rw-------", mode(beside(created, "-wal")));
                assertEquals("rw-------", mode(beside(created, "-shm")));
            }
            for (Path d = created.getParent(); !d.equals(dir); d = d.getParent()) {
                assertEquals("rwx------", mode(d), d::toString);
            }
        }

        /**
         * An operator may share a store with a group on purpose: a file that is there, even empty, keeps its
         * mode, which SQLite gives the log it makes beside it, and so does its directory.
         */
        @Test
        void anExistingFileAndItsDirectoryKeepTheirModes() throws Exception {
            Path shared = Files.createDirectory(dir.resolve("shared"));
            Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwx---"));
            Path made = shared.resolve("fence.db");
            Files.createFile(made);
            Files.setPosixFilePermissions(made, PosixFilePermissions.fromString("rw-rw----"));

            for (int open = 0; open < 2; open++) {
                try (SqliteLeaseStore s = SqliteLeaseStore.open(made, StoreOptions.defaults())) {
                    grantIn(s);
                    assertEquals("rw-rw----", mode(made));
                    assertEquals("rw-rw----", mode(beside(made, "-wal")));
                }
            }
            assertEquals("rw-rw----", mode(made));
            assertEquals("rwxrwx---", mode(shared));
        }

        /** The store fence uses when none is named, {@code ~/.local/share/fence/fence.db}, likewise. */
        @Test
        void theDefaultStoreAndItsDirectoryAreTheUsersAlone() throws Exception {
            Map<String, String> env = Map.of("HOME", dir.toString());

            try (LeaseStore s = Stores.open(Stores.resolveUrl(null, env), StoreOptions.defaults())) {
                s.identity(candidate);
            }

            Path made = Stores.defaultSqlitePath(env);
            assertEquals(dir.resolve(".local/share/fence/fence.db"), made);
            assertEquals("rw-------", mode(made));
            assertEquals("rwx------", mode(made.getParent()));
        }

        @Test
        void describeIsSchemeAndPath() {
            assertEquals("sqlite:" + file(), store.describe());
        }

        @Test
        void createsParentDirectoriesAndUsesWal() throws Exception {
            Path deep = dir.resolve("a/b/c/fence.db");

            try (SqliteLeaseStore s = SqliteLeaseStore.open(deep, StoreOptions.defaults())) {
                s.identity(candidate);
            }

            assertTrue(Files.isRegularFile(deep));
            store.identity(candidate);
            try (Connection c = raw()) {
                assertEquals("wal", queryString(c, "PRAGMA journal_mode"));
            }
        }

        @Test
        void aNewFileIsANewGeneration() {
            StoreIdentity first = store.identity(candidate);
            StoreIdentity other = Identities.candidate(clock.instant());

            try (SqliteLeaseStore s = SqliteLeaseStore.open(dir.resolve("other.db"), StoreOptions.defaults())) {
                assertEquals(other, s.identity(other));
                assertNotEquals(first.generation(), s.identity(candidate).generation());
            }
        }

        @Test
        void readsProceedWhileAnotherProcessHoldsTheWriteLockAndWritesTimeOut() throws Exception {
            LeaseStore s = open(new StoreOptions(Duration.ofMillis(300), Duration.ofDays(90), 0, Duration.ZERO));
            s.identity(candidate);
            try (Connection c = raw()) {
                execute(c, "BEGIN IMMEDIATE");

                assertEquals(0, s.snapshot(List.of(MAIN)).get(MAIN).version());
                long start = System.nanoTime();
                StoreUnavailableException e = assertUnavailable(
                        file(), () -> s.acquire(MAIN, "alice", TTL, clock.instant(), null, candidate));
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

                assertTrue(e.getMessage().contains("locked"), e::getMessage);
                assertTrue(waited >= 250 && waited < 3000, "waited " + waited + " ms for a 300 ms timeout");
                execute(c, "ROLLBACK");
            }
            assertEquals(0, s.snapshot(List.of(MAIN)).get(MAIN).latestGranted());
            assertInstanceOf(
                    AcquireResult.Granted.class, s.acquire(MAIN, "alice", TTL, clock.instant(), null, candidate));
        }

        @Test
        void aFileThatIsNotADatabaseIsUnavailable() throws Exception {
            Path junk = dir.resolve("junk.db");
            Files.writeString(junk, "this is not a database\n".repeat(500));

            StoreUnavailableException e =
                    assertUnavailable(junk, () -> SqliteLeaseStore.open(junk, StoreOptions.defaults()));
            assertTrue(e.getMessage().contains("damaged"), e::getMessage);
        }

        @Test
        void damagedPagesAreUnavailableNotWrongAnswers() throws Exception {
            for (int i = 0; i < 20; i++) {
                grant("resource-" + i, "alice");
            }
            store.close(); // the last connection checkpoints the WAL into the file
            byte[] garbage = new byte[(int) Files.size(file()) - 4096];
            Arrays.fill(garbage, (byte) 0x5a);
            try (var out = Files.newByteChannel(file(), StandardOpenOption.WRITE)) {
                out.position(4096);
                out.write(ByteBuffer.wrap(garbage));
            }

            assertUnavailable(file(), () -> {
                try (SqliteLeaseStore s = SqliteLeaseStore.open(file(), StoreOptions.defaults())) {
                    s.query(LedgerQuery.all());
                    s.acquire(MAIN, "alice", TTL, clock.instant(), null, candidate);
                }
            });
        }

        @Test
        void anUncreatableDirectoryIsUnavailable() throws Exception {
            Path blocker = dir.resolve("blocker");
            Files.writeString(blocker, "a file where a directory should be");
            Path inside = blocker.resolve("fence.db");

            assertUnavailable(inside, () -> SqliteLeaseStore.open(inside, StoreOptions.defaults()));
        }

        @Test
        void aDirectoryInPlaceOfTheFileIsUnavailable() {
            assertUnavailable(dir, () -> SqliteLeaseStore.open(dir, StoreOptions.defaults()));
        }

        @Test
        void anotherProgramsDatabaseIsRefusedAndLeftAlone() throws Exception {
            Path foreign = dir.resolve("foreign.db");
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + foreign)) {
                execute(c, "CREATE TABLE customers (id INTEGER PRIMARY KEY)");
            }

            StoreUnavailableException e =
                    assertUnavailable(foreign, () -> SqliteLeaseStore.open(foreign, StoreOptions.defaults()));

            assertTrue(e.getMessage().contains("another program"), e::getMessage);
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + foreign)) {
                assertEquals("1", queryString(c, "SELECT count(*) FROM sqlite_schema"));
            }
        }

        @Test
        void aStoreFromANewerFenceIsRefused() throws Exception {
            store.identity(candidate);
            store.close();
            try (Connection c = raw()) {
                execute(c, "PRAGMA user_version = 99");
            }

            StoreUnavailableException e =
                    assertUnavailable(file(), () -> SqliteLeaseStore.open(file(), StoreOptions.defaults()));
            assertTrue(e.getMessage().contains("newer fence"), e::getMessage);
        }

        @Test
        void aFileReplacedUnderAnOpenStoreIsNoticed() throws Exception {
            grant(MAIN, "alice");
            Path elsewhere = dir.resolve("elsewhere.db");
            StoreIdentity other = Identities.candidate(clock.instant());
            try (SqliteLeaseStore s = SqliteLeaseStore.open(elsewhere, StoreOptions.defaults())) {
                s.identity(other);
            }
            loseAllData();
            Files.move(elsewhere, file());

            assertEquals(other, store.identity(candidate));
            assertEquals(List.of(), store.query(LedgerQuery.all()));
        }

        /** A ledger query reads on a connection of its own, kept between queries: it must follow too. */
        @Test
        void aLedgerQueryAfterTheFileWasReplacedReadsTheNewFile() throws Exception {
            grant(MAIN, "alice");
            assertEquals(1, store.query(LedgerQuery.forResource(MAIN)).size());
            Path elsewhere = dir.resolve("elsewhere.db");
            try (SqliteLeaseStore s = SqliteLeaseStore.open(elsewhere, StoreOptions.defaults())) {
                s.identity(Identities.candidate(clock.instant()));
                s.append(List.of(event(clock.instant(), EventType.GRANT, "db/elsewhere", "bob", 1, null)));
            }
            loseAllData();
            Files.move(elsewhere, file());

            // Before anything else notices: the old file's events must not come back from a kept reader.
            assertEquals(
                    List.of("db/elsewhere"),
                    store.query(LedgerQuery.all()).stream()
                            .map(LedgerEvent::resource)
                            .toList());
            assertEquals(List.of(), store.query(LedgerQuery.forResource(MAIN)));
        }
    }

    @Override
    protected boolean pacesPruning() {
        return true;
    }

    /**
     * Calls of one instance's threads that queue while a transaction runs share the next one. These hold
     * SQLite's write lock from another connection so that calls queue up behind the store's first
     * transaction, then let go.
     */
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
         * Waits until the call that {@code worker} runs is in a transaction of the store's (past the point
         * where a closing store refuses it), or has ended.
         */
        private void awaitTransaction(AtomicReference<Thread> worker, Future<?> call) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!call.isDone()) {
                Thread t = worker.get();
                if (t != null
                        && Arrays.stream(t.getStackTrace())
                                .anyMatch(f -> f.getClassName().equals(SqliteLeaseStore.class.getName())
                                        && f.getMethodName().equals("transaction"))) {
                    return;
                }
                assertTrue(System.nanoTime() < end, "the call never began a transaction");
                Thread.sleep(1);
            }
        }

        @Test
        void callersSharingATransactionEachGetTheirOwnOutcome() throws Exception {
            AcquireResult.Granted held = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "alice", TTL, clock.instant(), null, candidate));
            ResourceState before = store.snapshot(List.of(MAIN)).get(MAIN);
            List<LedgerEvent> mainLedger = store.query(LedgerQuery.forResource(MAIN));
            ResourceWrite lowering = new ResourceWrite(
                    MAIN,
                    before.version(),
                    held.token() - 1,
                    0,
                    false,
                    0,
                    null,
                    null,
                    null,
                    store.identity(candidate).generation());
            int callers = 12;
            List<Future<AcquireResult>> grants = new ArrayList<>();
            Future<CommitResult> refused = null;
            Future<?> broken = null;
            try (Connection other = raw()) {
                execute(other, "BEGIN IMMEDIATE");
                for (int i = 0; i < callers; i++) {
                    String resource = "db/r" + i;
                    String holder = "agent-" + i;
                    grants.add(
                            pool.submit(() -> store.acquire(resource, holder, TTL, clock.instant(), null, candidate)));
                    if (i == callers / 2) {
                        // A commit that must fail, queued among the grants.
                        refused = pool.submit(() -> store.commit(
                                List.of(lowering),
                                List.of(event(
                                        clock.instant(), EventType.ACCEPT, MAIN, "mallory", held.token(), null))));
                    }
                    if (i == callers / 3) {
                        // And an append whose own statement fails (an event without a resource).
                        LedgerEvent nameless = new LedgerEvent(
                                0,
                                clock.instant(),
                                EventType.ALLOW,
                                null,
                                null,
                                null,
                                "x",
                                "x",
                                0,
                                null,
                                null,
                                null,
                                null);
                        broken = pool.submit(() -> store.append(List.of(nameless)));
                    }
                }
                // Long enough for every caller to queue; the store's timeout is longer.
                Thread.sleep(300);
                execute(other, "ROLLBACK");
            }
            Future<CommitResult> bad = refused;
            InternalException e = assertThrows(InternalException.class, () -> outcome(bad));
            assertTrue(e.getMessage().contains("would lower the tokens"), e.getMessage());
            Future<?> failing = broken;
            StoreUnavailableException notNull = assertThrows(StoreUnavailableException.class, () -> outcome(failing));
            assertTrue(notNull.getMessage().contains("NOT NULL"), notNull.getMessage());
            for (int i = 0; i < callers; i++) {
                AcquireResult.Granted g = assertInstanceOf(AcquireResult.Granted.class, outcome(grants.get(i)));
                assertEquals("agent-" + i, g.holder());
                assertEquals(
                        g.token(),
                        store.snapshot(List.of("db/r" + i)).get("db/r" + i).latestGranted());
                assertEquals(
                        List.of(EventType.GRANT),
                        store.query(LedgerQuery.forResource("db/r" + i)).stream()
                                .map(LedgerEvent::type)
                                .toList(),
                        "each grant is kept with its event");
            }
            assertEquals(before, store.snapshot(List.of(MAIN)).get(MAIN), "the refused commit wrote nothing");
            assertEquals(mainLedger, store.query(LedgerQuery.forResource(MAIN)), "nor an event");
        }

        @Test
        void eachCallWaitsForAnotherProcesssWriterUntilItsOwnDeadlineAndReadsDoNotWaitForIt() throws Exception {
            // Timeouts of 2 s, and the later call made 1.8 s into the first one's: when the first gives up, the
            // later one has 1.8 s of its own left, and the writer lets go 200 ms after that. Each moment counts
            // from when the first call began, not from when it was handed to a thread. The margin is wide
            // because SQLite's wait for a lock counts the sleeps it asked for, not the time that passed: on a
            // machine that stalls the process, the first call gives up late, while the later one's deadline is
            // the clock's.
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ZERO));
            s.identity(candidate);
            CountDownLatch earlyCalled = new CountDownLatch(1);
            Future<AcquireResult> early;
            Future<AcquireResult> late;
            Future<Map<String, ResourceState>> read;
            try (Connection other = raw()) {
                execute(other, "BEGIN IMMEDIATE");
                early = pool.submit(() -> {
                    earlyCalled.countDown();
                    return s.acquire("db/early", "a", TTL, clock.instant(), null, candidate);
                });
                assertTrue(earlyCalled.await(30, TimeUnit.SECONDS), "the first call was never made");
                Thread.sleep(1800);
                late = pool.submit(() -> s.acquire("db/late", "b", TTL, clock.instant(), null, candidate));
                read = pool.submit(() -> s.snapshot(List.of("db/early")));
                StoreUnavailableException e = assertThrows(StoreUnavailableException.class, () -> outcome(early));
                assertTrue(e.getMessage().contains("locked by another writer"), e.getMessage());
                // The writer still holds its lock: a read is not held up by it (WAL); held, it would fail at its
                // own deadline...
                assertEquals(0, read.get(5, TimeUnit.SECONDS).get("db/early").latestGranted());
                Thread.sleep(200);
                execute(other, "ROLLBACK");
            }
            // ...and the later call, queued with 1.8 s of its own left when the first gave up, waited on.
            assertInstanceOf(AcquireResult.Granted.class, outcome(late));
        }

        @Test
        void aReadIsNotHeldByWritesWaitingForAnotherProcesssWriter() throws Exception {
            // Timeouts of 2 s, the second write made at 1.8 s: it has most of its own left when the first gives
            // up, however late SQLite's wait lets the first one go on a machine that stalls the process.
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ZERO));
            s.identity(candidate);
            try (Connection other = raw()) {
                execute(other, "BEGIN IMMEDIATE");
                long start = System.nanoTime();
                Future<AcquireResult> first =
                        pool.submit(() -> s.acquire("db/x", "a", TTL, clock.instant(), null, candidate));
                Thread.sleep(100);
                Future<Long> read = pool.submit(() -> {
                    s.snapshot(List.of("db/x"));
                    return (System.nanoTime() - start) / 1_000_000;
                });
                Thread.sleep(1700);
                Future<AcquireResult> second =
                        pool.submit(() -> s.acquire("db/w", "b", TTL, clock.instant(), null, candidate));
                // The read waits at most for the first write's turn (its thread holds this process's connection
                // until its own deadline, at 2 s), then runs at once: not in the second write's turn, whose wait
                // for the writer lasts until 3.8 s.
                long readAt = read.get(5, TimeUnit.SECONDS);
                assertTrue(readAt < 3000, "the read answered " + readAt + " ms after the first write began");
                assertThrows(StoreUnavailableException.class, () -> outcome(first));
                execute(other, "ROLLBACK");
                assertInstanceOf(AcquireResult.Granted.class, outcome(second));
            }
        }

        @Test
        void anErrorInOneCallsWorkFailsThatCallAlone() throws Exception {
            Path fresh = dir.resolve("fresh/fence.db");
            LeaseStore s = SqliteLeaseStore.open(
                    fresh,
                    new StoreOptions(Duration.ofSeconds(10), Duration.ofDays(90), 0, Duration.ZERO).withCallerClock());
            try {
                // A store with no identity yet: the first grant makes one from its caller's candidate.
                s.append(List.of(event(clock.instant(), EventType.ALLOW, PLAIN, "x", 0, null)));
                List<Future<AcquireResult>> grants = new ArrayList<>();
                Future<AcquireResult> erring;
                try (Connection other = DriverManager.getConnection("jdbc:sqlite:" + fresh)) {
                    execute(other, "BEGIN IMMEDIATE");
                    Future<?> first = pool.submit(
                            () -> s.append(List.of(event(clock.instant(), EventType.ALLOW, PLAIN, "y", 0, null))));
                    Thread.sleep(100);
                    erring = pool.submit(() -> s.acquire("db/e", "e", TTL, clock.instant(), null, () -> {
                        throw new AssertionError("a bug in the caller's candidate");
                    }));
                    Thread.sleep(100);
                    for (int i = 0; i < 8; i++) {
                        String resource = "db/ok" + i;
                        grants.add(pool.submit(() -> s.acquire(resource, "h", TTL, clock.instant(), null, candidate)));
                    }
                    Thread.sleep(200);
                    execute(other, "ROLLBACK");
                    outcome(first);
                }
                InternalException e = assertThrows(InternalException.class, () -> outcome(erring));
                assertInstanceOf(AssertionError.class, e.getCause());
                for (Future<AcquireResult> g : grants) {
                    assertInstanceOf(AcquireResult.Granted.class, outcome(g));
                }
                assertEquals(0, s.snapshot(List.of("db/e")).get("db/e").latestGranted(), "nothing of the failed call");
            } finally {
                s.close();
            }
        }

        @Test
        void closingWhileATransactionRunsLetsItFinishAndThenClosesTheConnection() throws Exception {
            LeaseStore s = open(new StoreOptions(Duration.ofMillis(20), Duration.ofDays(90), 0, Duration.ZERO));
            s.identity(candidate);
            List<LedgerEvent> many = new ArrayList<>();
            for (int i = 0; i < 50_000; i++) {
                many.add(event(clock.instant(), EventType.ALLOW, "db/many" + i, "x", 0, null));
            }
            AtomicReference<Thread> appender = new AtomicReference<>();
            Future<?> append = pool.submit(() -> {
                appender.set(Thread.currentThread());
                s.append(many);
            });
            // Not before its transaction has begun: a call that has not is refused once the store is closing,
            // and a thread slow to start (a busy machine) would make this test about that instead.
            awaitTransaction(appender, append);
            // Waits 20 ms for the lock, then leaves the connection to the transaction still running on it
            // (freeing its statements under it crashed the JVM).
            s.close();
            outcome(append);
            InternalException e = assertThrows(InternalException.class, () -> s.snapshot(List.of("db/many0")));
            assertTrue(e.getMessage().contains("used after close"), e.getMessage());
            try (Connection c = raw()) {
                assertEquals("50000", queryString(c, "SELECT count(*) FROM events WHERE resource LIKE 'db/many%'"));
            }
        }

        @Test
        void callersWhoseTimeoutPassesWhileQueuedFailAndNothingOfTheirsIsWritten() throws Exception {
            LeaseStore impatient =
                    open(new StoreOptions(Duration.ofMillis(300), Duration.ofDays(90), 0, Duration.ZERO));
            impatient.identity(candidate);
            List<Future<AcquireResult>> grants = new ArrayList<>();
            try (Connection other = raw()) {
                execute(other, "BEGIN IMMEDIATE");
                for (int i = 0; i < 8; i++) {
                    String resource = "db/late" + i;
                    grants.add(
                            pool.submit(() -> impatient.acquire(resource, "a", TTL, clock.instant(), null, candidate)));
                }
                for (Future<AcquireResult> g : grants) {
                    StoreUnavailableException e = assertThrows(StoreUnavailableException.class, () -> outcome(g));
                    assertTrue(e.getMessage().contains("timeout of 300ms"), e.getMessage());
                }
                execute(other, "ROLLBACK");
            }
            for (int i = 0; i < 8; i++) {
                assertEquals(
                        0,
                        impatient
                                .snapshot(List.of("db/late" + i))
                                .get("db/late" + i)
                                .latestGranted());
            }
            assertEquals(
                    List.of(),
                    impatient.query(LedgerQuery.all()).stream()
                            .filter(ev -> ev.resource().startsWith("db/late"))
                            .toList());
            assertInstanceOf(
                    AcquireResult.Granted.class,
                    impatient.acquire("db/late0", "a", TTL, clock.instant(), null, candidate));
        }
        /**
         * Reads made while other threads hold the lock run on read-only connections of their own: each must
         * still see every write its caller was answered for, as on the store's own connection.
         */
        @Test
        void aReadAfterAnAnsweredWriteSeesItWhileOtherThreadsWrite() throws Exception {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 12; t++) {
                int worker = t;
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < 40; i++) {
                        String resource = "db/w" + worker + "-" + i;
                        AcquireResult.Granted g = assertInstanceOf(
                                AcquireResult.Granted.class,
                                store.acquire(resource, "agent-" + worker, TTL, clock.instant(), null, candidate));
                        assertEquals(
                                g.token(),
                                store.snapshot(List.of(resource)).get(resource).latestGranted(),
                                resource);
                        assertEquals(
                                List.of(EventType.GRANT),
                                store.query(LedgerQuery.forResource(resource)).stream()
                                        .map(LedgerEvent::type)
                                        .toList(),
                                resource);
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) {
                outcome(w);
            }
        }

        /**
         * An auditor's query of the whole ledger (through fence serve, the store is the verdicts') reads on a
         * connection of its own: it must not hold the store's lock, and with it every verdict's commit, for
         * its whole length (long enough, on a big ledger, for verdicts to time out as store-down).
         */
        @Test
        void aLongLedgerQueryHoldsUpNeitherWritesNorReads() throws Exception {
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(30), Duration.ofDays(90), 0, Duration.ZERO));
            s.identity(candidate);
            List<LedgerEvent> many = new ArrayList<>();
            for (int i = 0; i < 150_000; i++) {
                many.add(event(clock.instant(), EventType.ALLOW, "db/audited" + i % 100, "x", 0, null));
            }
            s.append(many);
            // Queries back to back on a thread of their own, each one's span recorded: however fast a warm
            // query runs, the grant below begins inside one of them, and a grant that waited for the lock would
            // answer only after that query ended.
            AtomicBoolean stop = new AtomicBoolean();
            List<long[]> spans = Collections.synchronizedList(new ArrayList<>());
            Future<?> queries = pool.submit(() -> {
                while (!stop.get()) {
                    long from = System.nanoTime();
                    // The grants below add to the ledger as it is read.
                    assertTrue(s.query(LedgerQuery.all()).size() >= 150_000);
                    spans.add(new long[] {from, System.nanoTime()});
                }
                return null;
            });
            try {
                while (spans.isEmpty()) {
                    Thread.sleep(10);
                }
                for (int attempt = 0; ; attempt++) {
                    long writeFrom = System.nanoTime();
                    AcquireResult.Granted granted = assertInstanceOf(
                            AcquireResult.Granted.class,
                            s.acquire("db/busy" + attempt, "a", TTL, clock.instant(), null, candidate));
                    assertEquals(
                            granted.token(),
                            s.snapshot(List.of("db/busy" + attempt))
                                    .get("db/busy" + attempt)
                                    .latestGranted());
                    long writeDone = System.nanoTime();
                    long[] around = null;
                    while (around == null) {
                        synchronized (spans) {
                            around = spans.stream()
                                    .filter(q -> q[0] < writeFrom && writeFrom < q[1])
                                    .findFirst()
                                    .orElse(null);
                            if (around == null && spans.get(spans.size() - 1)[0] > writeFrom) {
                                break; // the grant began in the gap between two queries
                            }
                        }
                        if (around == null) {
                            Thread.sleep(10);
                        }
                    }
                    if (around == null) {
                        assertTrue(attempt < 20, "inconclusive: every grant began between two queries");
                        continue;
                    }
                    long[] q = around;
                    assertTrue(
                            writeDone < q[1],
                            "the grant and read, begun " + (writeFrom - q[0]) / 1_000_000 + " ms into a query of "
                                    + (q[1] - q[0]) / 1_000_000 + " ms, answered only after it, "
                                    + (writeDone - q[0]) / 1_000_000 + " ms into it");
                    return;
                }
            } finally {
                stop.set(true);
                queries.get(60, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A long-running process's store copies SQLite's log into the file on a thread of its own, so that no
     * commit (and no call queued behind it) pays for a checkpoint; a one-shot process's leaves it to SQLite.
     * What has been copied is read from the log's index ({@code -shm}, SQLite's documented WAL-index
     * format): {@code mxFrame} at byte 16 of its header, {@code nBackfill} at byte 96, native byte order.
     */
    @Nested
    class Checkpoints {
        private Path db;

        @org.junit.jupiter.api.BeforeEach
        void file() {
            db = dir.resolve("checkpoints.db");
        }

        private int[] framesAndCopied() throws IOException {
            ByteBuffer shm =
                    ByteBuffer.wrap(Files.readAllBytes(Path.of(db + "-shm"))).order(java.nio.ByteOrder.nativeOrder());
            return new int[] {shm.getInt(16), shm.getInt(96)};
        }

        private void write(LeaseStore s, int commits) {
            for (int i = 0; i < commits; i++) {
                s.append(List.of(event(clock.instant(), EventType.GRANT, "db/c" + i, "a", i + 1, null)));
            }
        }

        private boolean copiedWithin(Duration wait) throws Exception {
            long end = System.nanoTime() + wait.toNanos();
            while (true) {
                int[] f = framesAndCopied();
                if (f[0] > 0 && f[1] == f[0]) {
                    return true;
                }
                if (System.nanoTime() > end) {
                    return false;
                }
                Thread.sleep(20);
            }
        }

        private boolean checkpointThreadAlive() {
            return Thread.getAllStackTraces().keySet().stream()
                    .anyMatch(t -> t.getName().equals("fence-sqlite-checkpoint " + db) && t.isAlive());
        }

        @Test
        void aLongRunningProcesssStoreCopiesTheLogSoonAfterWritesAndStopsWithTheStore() throws Exception {
            SqliteLeaseStore s = SqliteLeaseStore.open(db, StoreOptions.defaults());
            try {
                s.identity(candidate);
                // Far below the thousand pages at which SQLite would copy the log inside a commit.
                write(s, 40);
                assertTrue(
                        copiedWithin(Duration.ofSeconds(5)),
                        "log frames and copied: " + Arrays.toString(framesAndCopied()));
                assertTrue(checkpointThreadAlive());
            } finally {
                s.close();
            }
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (checkpointThreadAlive() && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertTrue(!checkpointThreadAlive(), "the checkpoint thread outlived its store");
            // The store's connection was the file's last: SQLite copied the log in and removed it, so that the
            // file alone (a backup's copy) holds every write.
            assertTrue(!Files.exists(Path.of(db + "-wal")), "the log outlived the store");
        }

        @Test
        void aOneShotProcesssStoreLeavesCheckpointsToSqlite() throws Exception {
            try (SqliteLeaseStore s =
                    SqliteLeaseStore.open(db, StoreOptions.defaults().withSingleConnection(true))) {
                s.identity(candidate);
                write(s, 40);
                Thread.sleep(300);
                int[] f = framesAndCopied();
                assertTrue(f[0] > 0 && f[1] < f[0], "log frames and copied: " + Arrays.toString(f));
            }
        }
    }

    @Nested
    @ProcessTest
    class Processes {
        private final List<Process> started = new ArrayList<>();

        private Process launch(String... args) throws IOException {
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1",
                    "-XX:+UseSerialGC",
                    "-Xshare:auto",
                    "-cp",
                    System.getProperty("java.class.path"),
                    StoreWorker.class.getName()));
            command.addAll(List.of(args));
            Path err = dir.resolve("worker-" + started.size() + ".err");
            Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
            started.add(p);
            return p;
        }

        /** What the workers wrote on stderr, for failure messages. */
        private String errors() {
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < started.size(); i++) {
                Path err = dir.resolve("worker-" + i + ".err");
                try {
                    if (Files.exists(err) && Files.size(err) > 0) {
                        out.append("worker ").append(i).append(": ").append(Files.readString(err));
                    }
                } catch (IOException e) {
                    out.append("worker ")
                            .append(i)
                            .append(": cannot read ")
                            .append(err)
                            .append(": ")
                            .append(e);
                }
            }
            return out.toString();
        }

        @AfterEach
        void killLeftovers() {
            started.forEach(Process::destroyForcibly);
        }

        @Test
        void eightProcessesOnOneNewFileGetExactlyOneWinnerPerRound() throws Exception {
            int workers = 8;
            int rounds = 50;
            store.close();
            loseAllData(); // the workers race to create the file
            Instant start = clock.instant();
            List<BufferedReader> outputs = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                Process p = launch("rounds", file().toString(), "worker-" + w, "" + rounds, "" + start.toEpochMilli());
                outputs.add(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
            }
            for (BufferedReader out : outputs) {
                assertEquals("ready", out.readLine(), this::errors);
            }
            for (Process p : started) {
                OutputStream in = p.getOutputStream();
                in.write("go\n".getBytes(StandardCharsets.UTF_8));
                in.flush();
            }
            Map<Integer, List<String[]>> grants = new HashMap<>();
            int busy = 0;
            for (int w = 0; w < workers; w++) {
                String line;
                while ((line = outputs.get(w).readLine()) != null) {
                    String[] f = line.split(" ");
                    if (f[0].equals("GRANT")) {
                        grants.computeIfAbsent(Integer.parseInt(f[1]), r -> new ArrayList<>())
                                .add(f);
                    } else {
                        assertEquals("BUSY", f[0], line);
                        busy++;
                    }
                }
                assertTrue(started.get(w).waitFor(60, TimeUnit.SECONDS));
                assertEquals(0, started.get(w).exitValue(), this::errors);
            }

            assertEquals(workers * rounds - rounds, busy);
            long last = 0;
            Set<String> generations = new HashSet<>();
            for (int r = 0; r < rounds; r++) {
                List<String[]> winners = grants.getOrDefault(r, List.of());
                assertEquals(1, winners.size(), "winners of round " + r);
                long token = Long.parseLong(winners.get(0)[2]);
                assertTrue(token > last, "round " + r + " token " + token + " after " + last);
                last = token;
                generations.add(winners.get(0)[3]);
            }
            assertEquals(1, generations.size(), generations::toString);
            try (SqliteLeaseStore s = SqliteLeaseStore.open(file(), StoreOptions.defaults())) {
                List<LedgerEvent> events = s.query(
                        new LedgerQuery(StoreWorker.RESOURCE, null, null, null, null, Set.of(EventType.GRANT), 0));
                assertEquals(rounds, events.size());
                for (int i = 1; i < events.size(); i++) {
                    assertTrue(events.get(i).token() > events.get(i - 1).token());
                }
                assertEquals(
                        last,
                        s.snapshot(List.of(StoreWorker.RESOURCE))
                                .get(StoreWorker.RESOURCE)
                                .latestGranted());
            }
        }

        @Test
        void processesKilledMidBurstLeaveAConsistentFile() throws Exception {
            store.identity(candidate);
            for (int cycle = 0; cycle < 3; cycle++) {
                List<Process> burst = List.of(
                        launch("burst", file().toString(), "" + (2 * cycle)),
                        launch("burst", file().toString(), "" + (2 * cycle + 1)));
                for (Process p : burst) {
                    BufferedReader out =
                            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                    for (int i = 0; i < 100; i++) {
                        assertEquals("ok", out.readLine(), this::errors);
                    }
                }
                for (Process p : burst) {
                    p.destroyForcibly();
                    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
                }
                assertConsistent();
            }

            long counter = state(StoreWorker.RESOURCE).latestGranted();
            clock.set(Instant.now().plusSeconds(60)); // every worker's lease has lapsed
            AcquireResult.Granted g = grant(StoreWorker.RESOURCE, "after");
            assertEquals(Math.max(counter, candidate.floor()) + 1, g.token());
            assertEquals(candidate.generation(), g.generation());
        }

        /** Every counter change and version bump is in the ledger: nothing was half-written. */
        private void assertConsistent() throws SQLException {
            try (Connection c = raw()) {
                assertEquals("ok", queryString(c, "PRAGMA integrity_check"));
                int checked = 0;
                try (Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery(
                                "SELECT resource, version, latest_granted, highest_accepted" + " FROM resources")) {
                    while (rs.next()) {
                        String resource = rs.getString(1).replace("'", "''");
                        String events = " FROM events WHERE resource = '" + resource + "'";
                        assertEquals(
                                queryString(c, "SELECT max(token)" + events + " AND type IN ('grant', 'bump')"),
                                rs.getString(3),
                                "counter of " + resource);
                        assertEquals(
                                queryString(c, "SELECT coalesce(max(token), 0)" + events + " AND type = 'accept'"),
                                rs.getString(4),
                                "highest accepted of " + resource);
                        assertEquals(
                                queryString(c, "SELECT count(*)" + events + " AND type IN ('grant', 'bump', 'accept')"),
                                rs.getString(2),
                                "version of " + resource);
                        checked++;
                    }
                }
                assertTrue(checked > 0);
            }
        }
    }
}
