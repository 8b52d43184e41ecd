package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.EventType;
import dev.fence.core.FencePolicy;
import dev.fence.core.KnownAncestry;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.StoreIdentity;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fence serve's verdict budget: a request that waited for a thread gets what is left of store-timeout
 * to reach the store, but a verdict whose write has begun is waited for the whole store-timeout, so the
 * ledger never records an admission while the pusher is told store-down.
 */
class VerdictBudgetTest {
    private static final Duration STORE_TIMEOUT = Duration.ofMillis(3000);

    /**
     * What the first request has left of the store timeout for its read: on a cold JVM and a busy machine
     * the read (the store's first, which makes its identity and syncs it) can take a few hundred ms.
     */
    private static final long LEFT_MILLIS = 1000;

    /**
     * The first verdict's write: longer than {@link #LEFT_MILLIS}, so that a hook that gave up when that ran
     * out would answer store-down, and short enough that the commit after it has 1.5 s of the store timeout.
     */
    private static final long WRITE_MILLIS = 1500;

    /**
     * The second verdict's read, for which no time is left: long enough that it cannot be over before the
     * hook, however late this thread runs again, looks at it.
     */
    private static final long LATE_READ_MILLIS = 500;

    private static final String CREATE = "0".repeat(40) + " " + "5".repeat(40) + " refs/heads/main\n";

    @TempDir
    Path tmp;

    @Test
    void aWriteThatBeganInTimeIsWaitedForTheWholeStoreTimeoutHoweverLongTheRequestWaited() throws Exception {
        String url = "sqlite:" + tmp.resolve("fence.db");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (LeaseStore sqlite = Stores.open(url, StoreOptions.defaults())) {
            LeaseStore slowWrites = new Slow(sqlite, 0, WRITE_MILLIS);
            PreReceiveHook hook = new PreReceiveHook(u -> slowWrites, Clock.systemUTC(), pool);
            HookConfig config = new HookConfig(
                    new FencePolicy(
                            List.of("refs/heads/**"),
                            List.of(),
                            FencePolicy.defaults().defaultPolicy(),
                            List.of(),
                            true,
                            STORE_TIMEOUT),
                    Optional.of(url),
                    Optional.empty(),
                    Optional.of("app"),
                    Optional.empty());
            // The request waited all but LEFT_MILLIS of the store timeout: the read gets in, the write takes longer.
            PreReceiveHook.Judgement j = hook.judge(
                    config,
                    Map.of("REMOTE_USER", "alice"),
                    null,
                    new ByteArrayInputStream(CREATE.getBytes(StandardCharsets.UTF_8)),
                    url,
                    KnownAncestry.collecting(),
                    new PreReceiveHook.Measured(
                            null, null, STORE_TIMEOUT.minusMillis(LEFT_MILLIS).toNanos()));
            assertEquals(0, j.result().exitCode(), j.result().lines().toString());
            assertTrue(!j.reason().equals("store-down"), "the verdict is the written one, not store-down");
            List<LedgerEvent> events = sqlite.query(LedgerQuery.forResource("git:app:refs/heads/main"));
            assertEquals(1, events.size(), events.toString());
            assertTrue(
                    events.get(0).type() != EventType.REJECT,
                    "the ledger holds the admission the pusher got: " + events);

            // With no time left for a slow read, the verdict is abandoned before it writes.
            PreReceiveHook slowReads =
                    new PreReceiveHook(u -> new Slow(sqlite, LATE_READ_MILLIS, 0), Clock.systemUTC(), pool);
            PreReceiveHook.Judgement late = slowReads.judge(
                    config,
                    Map.of("REMOTE_USER", "alice"),
                    null,
                    new ByteArrayInputStream(("0".repeat(40) + " " + "6".repeat(40) + " refs/heads/other\n")
                            .getBytes(StandardCharsets.UTF_8)),
                    url,
                    KnownAncestry.collecting(),
                    new PreReceiveHook.Measured(null, null, STORE_TIMEOUT.toNanos()));
            assertEquals("store-down", late.reason(), late.result().lines().toString());
            // The abandoned verdict's thread finishes its read while the store is still open: had it gone on to
            // write, the check below would see it.
            pool.shutdown();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS), "the abandoned verdict's thread did not end");
        } finally {
            pool.shutdownNow();
        }
        try (LeaseStore sqlite = Stores.open(url, StoreOptions.defaults())) {
            assertEquals(
                    List.of(),
                    sqlite.query(LedgerQuery.forResource("git:app:refs/heads/other")),
                    "the abandoned verdict wrote nothing, also later");
        }
    }

    /** A store whose reads and commits take that many milliseconds longer (begun, they finish). */
    private record Slow(LeaseStore s, long readMillis, long writeMillis) implements LeaseStore {
        private static void pause(long millis) {
            long end = System.nanoTime() + millis * 1_000_000;
            // A store's own I/O finishes whatever the caller's interrupt; so does this pause.
            while (System.nanoTime() < end) {
                try {
                    Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    // go on
                }
            }
        }

        @Override
        public CommitResult commit(List<ResourceWrite> writes, List<LedgerEvent> events) {
            pause(writeMillis);
            return s.commit(writes, events);
        }

        @Override
        public StoreIdentity identity(StoreIdentity candidate) {
            return s.identity(candidate);
        }

        @Override
        public AcquireResult acquire(
                String resource,
                String holder,
                long ttlMillis,
                Instant now,
                String grantSha,
                long ownToken,
                Supplier<StoreIdentity> candidate) {
            return s.acquire(resource, holder, ttlMillis, now, grantSha, ownToken, candidate);
        }

        @Override
        public LeaseCheck renew(String resource, String holder, long token, long ttlMillis, Instant now) {
            return s.renew(resource, holder, token, ttlMillis, now);
        }

        @Override
        public LeaseCheck release(String resource, String holder, long token, Instant now) {
            return s.release(resource, holder, token, now);
        }

        @Override
        public LeaseCheck moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
            return s.moveGrantSha(resource, holder, token, expectedSha, newSha);
        }

        @Override
        public Map<String, ResourceState> snapshot(Collection<String> resources) {
            pause(readMillis);
            return s.snapshot(resources);
        }

        @Override
        public IdentifiedSnapshot identityAndSnapshot(Collection<String> resources, Supplier<StoreIdentity> candidate) {
            pause(readMillis);
            return s.identityAndSnapshot(resources, candidate);
        }

        @Override
        public Duration retention(
                Duration newRetention, String changedBy, Instant now, Supplier<StoreIdentity> candidate) {
            return s.retention(newRetention, changedBy, now, candidate);
        }

        @Override
        public void append(List<LedgerEvent> events) {
            s.append(events);
        }

        @Override
        public List<LedgerEvent> query(LedgerQuery query) {
            return s.query(query);
        }

        @Override
        public String describe() {
            return s.describe();
        }

        @Override
        public void close() {
            // The test closes the store it opened.
        }
    }
}
