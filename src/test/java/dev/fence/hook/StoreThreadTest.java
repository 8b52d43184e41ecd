package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one-shot hook's store thread, on a real SQLite store. */
class StoreThreadTest {
    private static final String LINE = "0".repeat(40) + " " + "3".repeat(40) + " refs/heads/main\n";

    @TempDir
    Path tmp;

    @Test
    void theVerdictIsTakenWithoutWaitingForTheStoreToClose() throws Exception {
        String url = "sqlite:" + tmp.resolve("fence.db");
        Path conf = tmp.resolve("fence.conf");
        Files.writeString(conf, "store = " + url + "\nstore-timeout = 4s\n");
        CountDownLatch closing = new CountDownLatch(1);
        CountDownLatch mayClose = new CountDownLatch(1);
        PreReceiveHook hook = new PreReceiveHook(
                u -> new ClosesWhenAllowed(Stores.open(u, StoreOptions.defaults()), closing, mayClose),
                Clock.systemUTC());
        try {
            long start = System.nanoTime();
            PreReceiveHook.Result r = hook.run(
                    Map.of("FENCE_PUSHER", "alice", "FENCE_REPO_ID", "app"),
                    tmp,
                    new ByteArrayInputStream(LINE.getBytes(StandardCharsets.UTF_8)),
                    conf,
                    null);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(0, r.exitCode(), String.join("\n", r.lines()));
            // Waiting for the close would have taken the whole store timeout, and given a store-down verdict.
            assertTrue(millis < 3_000, "the verdict took " + millis + " ms (the store timeout is 4 s)");
            assertFalse(String.join("\n", r.lines()).contains("store"), String.join("\n", r.lines()));
            assertTrue(closing.await(10, TimeUnit.SECONDS), "the store thread still closes the store");
        } finally {
            mayClose.countDown();
        }
        try (LeaseStore store = Stores.open(url, StoreOptions.defaults())) {
            assertFalse(store.query(LedgerQuery.all()).isEmpty(), "the push was judged by the store and recorded");
        }
    }

    /** A real store whose close waits until the test allows it. */
    private record ClosesWhenAllowed(LeaseStore store, CountDownLatch closing, CountDownLatch mayClose)
            implements LeaseStore {
        @Override
        public void close() {
            closing.countDown();
            try {
                mayClose.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            store.close();
        }

        @Override
        public StoreIdentity identity(StoreIdentity candidate) {
            return store.identity(candidate);
        }

        @Override
        public AcquireResult acquire(
                String resource,
                String holder,
                long ttlMillis,
                Instant now,
                String grantSha,
                Supplier<StoreIdentity> candidate) {
            return store.acquire(resource, holder, ttlMillis, now, grantSha, candidate);
        }

        @Override
        public LeaseCheck renew(String resource, String holder, long token, long ttlMillis, Instant now) {
            return store.renew(resource, holder, token, ttlMillis, now);
        }

        @Override
        public LeaseCheck release(String resource, String holder, long token, Instant now) {
            return store.release(resource, holder, token, now);
        }

        @Override
        public LeaseCheck moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
            return store.moveGrantSha(resource, holder, token, expectedSha, newSha);
        }

        @Override
        public Map<String, ResourceState> snapshot(Collection<String> resources) {
            return store.snapshot(resources);
        }

        @Override
        public StoreIdentity identityOf(String generation, Supplier<StoreIdentity> candidate) {
            return store.identityOf(generation, candidate);
        }

        @Override
        public IdentifiedSnapshot identityAndSnapshot(Collection<String> resources, Supplier<StoreIdentity> candidate) {
            return store.identityAndSnapshot(resources, candidate);
        }

        @Override
        public CommitResult commit(List<ResourceWrite> writes, List<LedgerEvent> events) {
            return store.commit(writes, events);
        }

        @Override
        public void append(List<LedgerEvent> events) {
            store.append(events);
        }

        @Override
        public List<LedgerEvent> query(LedgerQuery query) {
            return store.query(query);
        }

        @Override
        public String describe() {
            return store.describe();
        }
    }
}
