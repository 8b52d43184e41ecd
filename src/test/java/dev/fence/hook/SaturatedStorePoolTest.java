package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.FencePolicy;
import dev.fence.core.KnownAncestry;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fence serve judges on a bounded store pool. When that pool is full (a hung store holds its threads), a
 * verdict is the store-down verdict, as when the store does not answer in time, never an internal error.
 */
class SaturatedStorePoolTest {
    private static final String Z = "0".repeat(40);

    @TempDir
    Path tmp;

    @Test
    void aFullStorePoolGivesTheStoreDownVerdict() throws Exception {
        String url = "sqlite:" + tmp.resolve("fence.db");
        CountDownLatch hung = new CountDownLatch(1);
        ThreadPoolExecutor full = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new SynchronousQueue<>());
        try {
            full.execute(() -> {
                try {
                    hung.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            PreReceiveHook hook =
                    new PreReceiveHook(u -> Stores.open(u, StoreOptions.defaults()), Clock.systemUTC(), full);
            HookConfig config = new HookConfig(
                    FencePolicy.defaults(), Optional.of(url), Optional.empty(), Optional.of("app"), Optional.empty());
            String rewrite = "1".repeat(40) + " " + "2".repeat(40) + " refs/heads/main\n";
            KnownAncestry ancestry = KnownAncestry.collecting();
            ancestry.fact("1".repeat(40), "2".repeat(40), false);
            PreReceiveHook.Judgement j = hook.judge(
                    config,
                    Map.of("REMOTE_USER", "alice"),
                    null,
                    new ByteArrayInputStream(rewrite.getBytes(StandardCharsets.UTF_8)),
                    url,
                    ancestry,
                    PreReceiveHook.Measured.NOTHING);
            assertEquals("store-down", j.reason(), j.result().lines().toString());
            assertEquals(1, j.result().exitCode(), "a rewrite of a fenced ref is refused while the store is down");
            assertTrue(
                    String.join("\n", j.result().lines()).contains("too many store calls waiting"),
                    j.result().lines().toString());

            String create = Z + " " + "3".repeat(40) + " refs/heads/new\n";
            PreReceiveHook.Judgement c = hook.judge(
                    config,
                    Map.of("REMOTE_USER", "alice"),
                    null,
                    new ByteArrayInputStream(create.getBytes(StandardCharsets.UTF_8)),
                    url,
                    KnownAncestry.collecting(),
                    PreReceiveHook.Measured.NOTHING);
            assertEquals(0, c.result().exitCode(), "a creation is accepted under on-store-down = accept");
        } finally {
            hung.countDown();
            full.shutdownNow();
        }
    }
}
