package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 50 lease clients against one server for {@link #DURATION}: acquire, renew, release on a few shared
 * resources. Every answer must be a success or a busy/fenced outcome, never an error, and no token may
 * be granted twice.
 */
@Tag("soak")
@ProcessTest
class ConcurrentLeaseClientsTest {
    static final Duration DURATION = Duration.ofSeconds(20);
    static final int CLIENTS = 50;
    static final int RESOURCES = 8;

    @TempDir
    Path tmp;

    @Test
    void fiftyClientsForTwentySecondsGetUniqueTokensAndNoErrors() throws Exception {
        Assumptions.assumeTrue(RedisServer.findExecutable() != null, "redis-server is not installed");
        try (RedisServer redis = RedisServer.start();
                TestServer t = TestServer.start(tmp.resolve("server"), redis.url(), "")) {
            String agents = t.add("agents", Role.AGENT, "client-*");
            Map<String, Set<Long>> granted = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
            AtomicLong grants = new AtomicLong();
            AtomicLong calls = new AtomicLong();
            long end = System.nanoTime() + DURATION.toNanos();
            ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                String holder = "client-" + c;
                int first = c;
                running.add(pool.submit(() -> {
                    int i = first;
                    while (System.nanoTime() < end && problems.size() < 20) {
                        String resource = "res/" + (i++ % RESOURCES);
                        try {
                            var r = t.post(
                                    "/v1/leases/acquire",
                                    agents,
                                    "application/json",
                                    "{\"resource\":\"" + resource + "\",\"holder\":\"" + holder + "\",\"ttl\":\"2s\"}");
                            calls.incrementAndGet();
                            if (r.status() == 409) {
                                continue;
                            }
                            if (r.status() != 200) {
                                problems.add("acquire " + r.status() + " " + r.body());
                                continue;
                            }
                            JsonNode g = Json.read(r.body());
                            long token = g.get("token").asLong();
                            grants.incrementAndGet();
                            if (!granted.computeIfAbsent(resource, k -> ConcurrentHashMap.newKeySet())
                                    .add(token)) {
                                problems.add("token " + token + " granted twice on " + resource);
                            }
                            String check = "{\"resource\":\"" + resource + "\",\"holder\":\"" + holder + "\",\"token\":"
                                    + token + ",\"proof\":\"" + g.get("proof").asText() + "\"}";
                            var renewed = t.post("/v1/leases/renew", agents, "application/json", check);
                            var released = t.post("/v1/leases/release", agents, "application/json", check);
                            calls.addAndGet(2);
                            for (var a : List.of(renewed, released)) {
                                if (a.status() != 200 && a.status() != 409) {
                                    problems.add("renew/release " + a.status() + " " + a.body());
                                }
                            }
                        } catch (Exception e) {
                            problems.add(e.toString());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : running) {
                f.get(DURATION.toSeconds() + 60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertEquals(List.of(), List.copyOf(problems));
            assertTrue(grants.get() > CLIENTS, "only " + grants.get() + " grants in " + calls.get() + " calls");
            long distinct = granted.values().stream().mapToLong(Set::size).sum();
            assertEquals(grants.get(), distinct, "every grant has its own token");
        }
    }
}
