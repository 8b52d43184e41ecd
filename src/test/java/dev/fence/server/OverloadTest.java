package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.json.Json;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overload and waiting: a request no thread takes within half the store timeout of being complete is
 * answered 503 at once and never runs, and a hook verdict that waited for a thread gets only what is left
 * of the store timeout, so a verdict is answered within the store timeout of its request being complete
 * (the curl shim waits longer, and fails closed on a 503). The time a client takes to upload a request is
 * not the server's to spend: it shortens nothing. The store is a private redis-server frozen with SIGSTOP,
 * so a verdict that runs holds its only thread for the whole store timeout.
 */
@ProcessTest
class OverloadTest {
    private static final Duration STORE_TIMEOUT = Duration.ofMillis(3000);
    private static final String LINE = "0".repeat(40) + " " + "3".repeat(40) + " refs/heads/main\n";
    private static final String BODY =
            Json.write(Map.of("stdin", LINE, "env", Map.of("REMOTE_USER", "alice", "FENCE_REPO_ID", "app")));

    @TempDir
    Path tmp;

    RedisServer redis;
    TestServer t;
    String hook;

    @BeforeEach
    void start() {
        assumeTrue(RedisServer.findExecutable() != null, "redis-server is not installed");
        redis = RedisServer.start();
        t = TestServer.start(
                tmp.resolve("server"),
                redis.url(),
                "store-timeout = " + STORE_TIMEOUT.toMillis() + "ms\n",
                STORE_TIMEOUT,
                s -> new ServerSettings(
                        s.listen(),
                        s.storeUrl(),
                        s.credentials(),
                        s.hook(),
                        1,
                        64,
                        s.maxBodyBytes(),
                        s.grace(),
                        s.requestTimeout()));
        hook = t.add("githost", Role.HOOK);
        assertEquals(200, t.get("/readyz", null, null).status());
    }

    @AfterEach
    void stop() {
        if (t != null) {
            t.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private static long millisSince(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }

    private TestServer.Response verdict() {
        return t.post("/v1/hook/pre-receive", hook, "application/json", BODY);
    }

    @Test
    void requestsNoThreadTakesInHalfTheStoreTimeoutAreAnswered503AtOnce() throws Exception {
        redis.freeze();
        try {
            CompletableFuture<TestServer.Response> running = CompletableFuture.supplyAsync(this::verdict);
            // Requests sent once it holds the only thread wait, however late the client's thread sent it.
            t.awaitRequestThreadsBusy(1);
            List<CompletableFuture<long[]>> waiting = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                waiting.add(CompletableFuture.supplyAsync(() -> {
                    long start = System.nanoTime();
                    TestServer.Response r = verdict();
                    assertTrue(r.body().contains("overloaded"), r.body());
                    return new long[] {r.status(), millisSince(start)};
                }));
            }
            for (CompletableFuture<long[]> w : waiting) {
                long[] r = w.get();
                assertEquals(503, r[0], "a request no thread took is refused");
                // Half the store timeout (1500 ms) after it was sent, not after the running verdict's 3000 ms.
                assertTrue(r[1] < 2500, "answered after " + r[1] + " ms");
            }
            TestServer.Response first = running.get();
            assertEquals(200, first.status(), first.body());
            assertTrue(first.body().contains("store-down"), "the verdict that ran is store-down: " + first.body());
            String metrics = t.get("/metrics", null, null).body();
            assertTrue(metrics.contains("fence_requests_shed_total 4.0"), metrics);
        } finally {
            redis.thaw();
        }
    }

    @Test
    void aRequestAThreadTookLeavesNoQueueWaitTimerBehind() throws Exception {
        // Each timer left to fire holds its whole request for half the store timeout; at thousands of
        // verdicts a second that was tens of megabytes every young collection copied.
        redis.freeze();
        List<CompletableFuture<TestServer.Response>> sent = new ArrayList<>();
        try {
            sent.add(CompletableFuture.supplyAsync(this::verdict));
            t.awaitRequestThreadsBusy(1);
            for (int i = 0; i < 3; i++) {
                sent.add(CompletableFuture.supplyAsync(this::verdict));
            }
            long deadline = System.nanoTime() + 1_000_000_000L;
            while (t.server().shedTimersPending() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(3, t.server().shedTimersPending(), "a timer for each request waiting for the only thread");
        } finally {
            // The running verdict's store answers; the waiting three are taken well within their 1.5 s.
            redis.thaw();
        }
        for (CompletableFuture<TestServer.Response> r : sent) {
            assertEquals(200, r.get().status(), r.get().body());
        }
        assertEquals(0, t.server().shedTimersPending(), "the taken requests' timers were cancelled, not left to fire");
        assertEquals(200, verdict().status());
        assertEquals(0, t.server().shedTimersPending(), "a request no other waited behind sets none");
    }

    @Test
    void aVerdictThatWaitedForAThreadGetsWhatIsLeftOfTheStoreTimeout() throws Exception {
        redis.freeze();
        try {
            CompletableFuture<TestServer.Response> running = CompletableFuture.supplyAsync(this::verdict);
            // Sent 2 s after the running verdict took the only thread, it waits at most 1 s for it (under the
            // 1.5 s bound), then has what is left of its 3 s.
            t.awaitRequestThreadsBusy(1);
            Thread.sleep(2000);
            long start = System.nanoTime();
            TestServer.Response late = verdict();
            long took = millisSince(start);
            assertEquals(200, late.status(), late.body());
            assertTrue(late.body().contains("store-down"), late.body());
            // Without the budget: 1 s waiting + the whole 3 s store timeout.
            assertTrue(took < 3600, "answered " + took + " ms after it was sent");
            assertEquals(200, running.get().status());
        } finally {
            redis.thaw();
        }
    }

    @Test
    void aSlowUploadShortensNothing() throws Exception {
        URI u = URI.create(t.url());
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        String head = "POST /v1/hook/pre-receive HTTP/1.1\r\nHost: " + u.getHost() + "\r\nAuthorization: Bearer "
                + hook + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n";
        redis.freeze();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(u.getHost(), u.getPort()), 2000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // The body comes late, as from a slow link or a large push: the store still gets its whole time.
            Thread.sleep(1000);
            out.write(body);
            out.flush();
            long sent = System.nanoTime();
            InputStream in = s.getInputStream();
            String reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            long took = millisSince(sent);
            assertTrue(reply.startsWith("HTTP/1.1 200 "), reply);
            assertTrue(reply.contains("store-down"), reply);
            assertTrue(took >= 2800, "the store had " + took + " ms of its 3000 after the body arrived");
        } finally {
            redis.thaw();
        }
    }
}
