package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.Reason;
import dev.fence.json.Json;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an operator of {@code fence serve} relies on: bounded metrics, a quiet /readyz and the access log. */
class ServerOperationsTest {
    @TempDir
    Path tmp;

    private static final Pattern SERIES = Pattern.compile("(?m)^([a-z_]+)\\{([^}]*)} (\\S+)$");

    @Test
    void everyDocumentedCounterIsThereAtZeroBeforeAnyRequestWithBuildAndProcessMetrics() {
        try (TestServer t = TestServer.start(tmp.resolve("s"), "sqlite:" + tmp.resolve("m.db"), "")) {
            String m = t.get("/metrics", null, null).body();
            for (String op : ServerMetrics.LEASE_OPERATIONS) {
                for (String outcome : ServerMetrics.LEASE_OUTCOMES) {
                    assertTrue(
                            m.contains("fence_lease_operations_total{operation=\"" + op + "\",outcome=\"" + outcome
                                    + "\"} 0"),
                            op + "/" + outcome + " missing:\n" + m);
                }
            }
            for (String op : ServerMetrics.STORE_OPERATIONS) {
                assertTrue(m.contains("fence_store_errors_total{operation=\"" + op + "\"} 0"), op + ":\n" + m);
            }
            assertTrue(m.contains("fence_auth_failures_total{status=\"401\"} 0"), m);
            assertTrue(m.contains("fence_auth_failures_total{status=\"403\"} 0"), m);
            assertTrue(m.contains("\nfence_requests_shed_total 0"), m);
            for (Reason r : Reason.values()) {
                String series = "fence_hook_verdicts_total{hook=\"pre-receive\",reason=\"" + r.code() + "\",verdict=";
                assertTrue(
                        m.contains(series + "\"accept\"} 0") || m.contains(series + "\"reject\"} 0"),
                        r.code() + ":\n" + m);
            }
            assertTrue(
                    m.contains("fence_hook_verdicts_total{hook=\"post-receive\",reason=\"-\",verdict=\"recorded\"} 0"),
                    m);
            assertTrue(m.contains("fence_build_info{java=\"" + Runtime.version() + "\",version=\""), m);
            for (String name : List.of(
                    "process_cpu_seconds_total",
                    "process_start_time_seconds",
                    "process_open_fds",
                    "jvm_threads_current")) {
                assertTrue(m.contains("\n" + name + " "), name + " missing:\n" + m);
            }
        }
    }

    @Test
    void unknownMethodsAreCountedAsOneValueSoCallersCannotGrowTheSeries() {
        try (TestServer t = TestServer.start(tmp.resolve("s"), "sqlite:" + tmp.resolve("m.db"), "")) {
            for (String method : List.of("FROB", "XYZZY", "PROPFIND", "BREW", "Q1W2E3", "PUT", "DELETE")) {
                for (String path : List.of("/v1/leases/acquire", "/healthz", "/nowhere")) {
                    HttpRequest r = HttpRequest.newBuilder(URI.create(t.url() + path))
                            .timeout(Duration.ofSeconds(10))
                            .method(method, HttpRequest.BodyPublishers.noBody())
                            .build();
                    TestServer.send(r);
                }
            }
            t.get("/healthz", null, null);
            String m = t.get("/metrics", null, null).body();
            Set<String> methods = new TreeSet<>();
            Matcher x = SERIES.matcher(m);
            while (x.find()) {
                if (x.group(1).startsWith("fence_http_request_duration_seconds")) {
                    Matcher method = Pattern.compile("method=\"([^\"]*)\"").matcher(x.group(2));
                    assertTrue(method.find(), x.group());
                    methods.add(method.group(1));
                }
            }
            assertEquals(Set.of("GET", "other"), methods, m);
        }
    }

    @Test
    void readyzNamesNeitherTheStoreNorItsErrorToAnUnauthenticatedCaller() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        String url = "redis://127.0.0.1:" + closed + "/0";
        try (TestServer t = TestServer.start(tmp.resolve("s"), url, "", Duration.ofSeconds(1))) {
            for (int i = 0; i < 3; i++) {
                var ready = t.get("/readyz", null, null);
                assertEquals(503, ready.status(), ready.body());
                JsonNode body = Json.read(ready.body());
                assertEquals("unavailable", body.get("status").asText());
                assertFalse(ready.body().contains(Integer.toString(closed)), ready.body());
                assertFalse(ready.body().contains("127.0.0.1"), ready.body());
                assertFalse(ready.body().toLowerCase().contains("redis"), ready.body());
            }
            List<String> why =
                    t.log.stream().filter(l -> l.startsWith("readyz: ")).toList();
            assertEquals(1, why.size(), "the reason is logged once while it lasts: " + t.log);
        }
    }

    @Test
    void everyRequestGetsOneAccessLineWithoutCredentialProofOrQuery() throws Exception {
        try (TestServer t = TestServer.start(tmp.resolve("s"), "sqlite:" + tmp.resolve("a.db"), "")) {
            String agent = t.add("agent-a", Role.AGENT);
            String secret = agent.substring(agent.indexOf(':') + 1);
            var granted = Json.read(t.post(
                            "/v1/leases/acquire",
                            agent,
                            "application/json",
                            "{\"resource\":\"db/one\",\"holder\":\"agent-a\",\"ttl\":\"30s\"}")
                    .body());
            String proof = granted.get("proof").asText();
            assertTrue(proof.length() > 8, granted.toString());
            var renewed = t.post(
                    "/v1/leases/renew",
                    agent,
                    "application/json",
                    "{\"resource\":\"db/one\",\"holder\":\"agent-a\",\"token\":" + granted.get("token")
                            + ",\"proof\":\"" + proof + "\"}");
            assertEquals(200, renewed.status(), renewed.body());
            t.get("/v1/leases/status?resource=db/one&proof=" + proof, agent, null);
            t.get("/v1/leases/status?resource=db/one", "agent-a:wrong-secret", null);
            t.get("/healthz", null, null);
            t.get("/v1/audit", agent, null);
            t.get("/nowhere/%0D%0Aaccess%20forged", null, null);
            // Jetty answers this one itself (a bad header), and it is logged all the same.
            RawHttp.send(URI.create(t.url()), "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 5000);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (access(t).size() < 8 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            List<String> lines = access(t);
            assertEquals(8, lines.size(), String.join("\n", t.log));
            String all = String.join("\n", lines);
            // Each line is written when its answer is sent, so their order is not asserted.
            assertTrue(
                    lines.stream()
                            .anyMatch(l -> l.matches(
                                    "access 127\\.0\\.0\\.1 POST /v1/leases/acquire 200 \\d+B \\d+ms caller=agent-a")),
                    all);
            assertTrue(lines.stream().anyMatch(l -> l.contains(" 401 ") && l.endsWith("caller=-")), all);
            assertTrue(
                    lines.stream().anyMatch(l -> l.contains(" GET /v1/audit 403 ") && l.endsWith("caller=agent-a")),
                    all);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("access 127.0.0.1 GET /healthz 200 ")), all);
            assertTrue(lines.stream().anyMatch(l -> l.contains(" GET /nowhere/%0D%0Aaccess%20forged ")), all);
            assertTrue(lines.stream().anyMatch(l -> l.contains(" 400 ")), all);
            String log = String.join("\n", t.log);
            assertFalse(log.contains(secret), log);
            assertFalse(log.contains(proof), log);
            assertFalse(log.contains("wrong-secret"), log);
            assertFalse(log.contains("Bearer"), log);
            assertFalse(log.contains("resource=db"), "no query string: " + log);
            assertFalse(log.contains("listening on"), "the caller prints where it listens, once: " + log);
            for (String l : t.log) {
                assertFalse(l.contains("\n") || l.contains("\r") || l.contains("\u0007"), l);
            }
        }
    }

    private static List<String> access(TestServer t) {
        return t.log.stream().filter(l -> l.startsWith("access ")).toList();
    }
}
