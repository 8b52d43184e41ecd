package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.hook.PreReceiveHook;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.io.ByteArrayInputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
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
 * A store that stops answering (a private redis-server frozen with SIGSTOP: it keeps accepting
 * connections and never replies): every request is answered within a bound, hook verdicts are exactly
 * the Java hook's store-down verdicts, and a stop waits for requests in flight.
 */
@ProcessTest
class SlowStoreTest {
    private static final Duration STORE_TIMEOUT = Duration.ofMillis(800);
    private static final Duration BOUND = Duration.ofMillis(2500);
    private static final String LINE = "0".repeat(40) + " " + "3".repeat(40) + " refs/heads/main\n";

    @TempDir
    Path tmp;

    RedisServer redis;
    TestServer t;
    String hook;
    String agent;

    @BeforeEach
    void start() {
        assumeTrue(RedisServer.findExecutable() != null, "redis-server is not installed");
        redis = RedisServer.start();
        t = TestServer.start(
                tmp.resolve("server"),
                redis.url(),
                "store-timeout = " + STORE_TIMEOUT.toMillis() + "ms\n",
                STORE_TIMEOUT);
        hook = t.add("githost", Role.HOOK);
        agent = t.add("agent-a", Role.AGENT);
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

    @Test
    void everyRequestIsAnsweredWithinTheBoundWhileTheStoreIsFrozen() throws Exception {
        redis.freeze();
        try {
            long start = System.nanoTime();
            var ready = t.get("/readyz", null, null);
            assertEquals(503, ready.status(), ready.body());
            assertTrue(millisSince(start) < BOUND.toMillis(), "readyz took " + millisSince(start) + " ms");

            start = System.nanoTime();
            var acquire = t.post(
                    "/v1/leases/acquire", agent, "application/json", "{\"resource\":\"r\",\"holder\":\"agent-a\"}");
            assertEquals(503, acquire.status(), acquire.body());
            assertEquals(5, Json.read(acquire.body()).get("exitCode").asInt());
            assertTrue(millisSince(start) < BOUND.toMillis(), "acquire took " + millisSince(start) + " ms");

            start = System.nanoTime();
            var audit = t.get("/v1/audit", t.add("reader", Role.AUDITOR), null);
            assertEquals(503, audit.status(), audit.body());
            assertTrue(millisSince(start) < BOUND.toMillis(), "audit took " + millisSince(start) + " ms");
            assertEquals(200, t.get("/healthz", null, null).status(), "the process itself is up");
        } finally {
            redis.thaw();
        }
    }

    @Test
    void hookVerdictsWhileTheStoreIsFrozenAreTheJavaHooksStoreDownVerdicts() throws Exception {
        Map<String, String> withToken = Map.of(
                "REMOTE_USER", "agent-a",
                "FENCE_REPO_ID", "app",
                "GIT_PUSH_OPTION_COUNT", "2",
                "GIT_PUSH_OPTION_0", "fence=5",
                "GIT_PUSH_OPTION_1", "fence-proof=fp1.gen." + "A".repeat(43));
        Map<String, String> tokenless = Map.of("REMOTE_USER", "alice", "FENCE_REPO_ID", "app");
        Path conf = tmp.resolve("direct.conf");
        // The direct hook's repo id comes from its file; the server takes the one the remote hook measured.
        Files.writeString(
                conf,
                "store = " + redis.url() + "\nstore-timeout = " + STORE_TIMEOUT.toMillis() + "ms\nrepo-id = app\n");
        PreReceiveHook direct = new PreReceiveHook(
                u -> Stores.open(u, new StoreOptions(STORE_TIMEOUT, Duration.ofDays(1), 0, Duration.ofMillis(100))),
                Clock.systemUTC());
        redis.freeze();
        try {
            for (Map<String, String> env : List.of(withToken, tokenless)) {
                PreReceiveHook.Result expected = direct.run(
                        env, tmp, new ByteArrayInputStream(LINE.getBytes(StandardCharsets.UTF_8)), conf, null);
                long start = System.nanoTime();
                var r = t.post(
                        "/v1/hook/pre-receive",
                        hook,
                        "application/json",
                        Json.write(Map.of("stdin", LINE, "env", env)));
                assertTrue(millisSince(start) < BOUND.toMillis(), "the verdict took " + millisSince(start) + " ms");
                assertEquals(200, r.status(), r.body());
                JsonNode n = Json.read(r.body());
                List<String> lines = new ArrayList<>();
                n.get("lines").forEach(l -> lines.add(l.asText()));
                assertEquals(expected.exitCode(), n.get("exitCode").asInt(), r.body());
                assertEquals(
                        normalise(expected.lines()), normalise(lines), "the server words store-down as the hook does");
            }
            var withTokenVerdict = t.post(
                    "/v1/hook/pre-receive",
                    hook,
                    "application/json",
                    Json.write(Map.of("stdin", LINE, "env", withToken)));
            assertTrue(withTokenVerdict.body().contains("\"verdict\":\"reject\""), "fenced pushes fail closed");
            var tokenlessVerdict = t.post(
                    "/v1/hook/pre-receive",
                    hook,
                    "application/json",
                    Json.write(Map.of("stdin", LINE, "env", tokenless)));
            assertTrue(tokenlessVerdict.body().contains("\"verdict\":\"accept\""), "tokenless follow on-store-down");
            assertTrue(t.get("/metrics", null, null).body().contains("reason=\"store-down\""));
        } finally {
            redis.thaw();
        }
    }

    private static List<String> normalise(List<String> lines) {
        // Which timeout fires first (the executor's or the store socket's, both store-timeout) decides
        // the wording of the problem in brackets; everything else must match.
        return lines.stream()
                .map(l -> l.replaceAll("unavailable \\(.*\\); ", "unavailable (...); "))
                .toList();
    }

    @Test
    void aStopWaitsForRequestsInFlightAndThenRefusesConnections() throws Exception {
        redis.freeze();
        try {
            CompletableFuture<TestServer.Response> inFlight = CompletableFuture.supplyAsync(() -> t.post(
                    "/v1/hook/pre-receive",
                    hook,
                    "application/json",
                    Json.write(Map.of("stdin", LINE, "env", Map.of("REMOTE_USER", "alice", "FENCE_REPO_ID", "app")))));
            // Stopped once the request holds a thread, with most of its 800 ms still to wait: not after a
            // fixed sleep, which a busy machine could end before the request arrives or late in its wait.
            t.awaitRequestThreadsBusy(1);
            String url = t.url();
            long start = System.nanoTime();
            t.server().close();
            TestServer.Response r = inFlight.get();
            assertEquals(200, r.status(), "the request in flight was answered: " + r.body());
            assertTrue(millisSince(start) >= 200, "the stop waited for it");
            assertThrows(
                    UncheckedIOException.class,
                    () -> TestServer.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/healthz"))
                            .timeout(Duration.ofSeconds(2))
                            .build()));
        } finally {
            redis.thaw();
        }
    }
}
