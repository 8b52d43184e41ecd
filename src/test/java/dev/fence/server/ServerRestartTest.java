package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server restarted between a grant and a push: no token is reused and the push is judged as before. */
@ProcessTest
class ServerRestartTest {
    @TempDir
    Path tmp;

    @Test
    void sqlite() throws Exception {
        scenario("sqlite:" + tmp.resolve("restart.db"));
    }

    @Test
    void redis() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(RedisServer.findExecutable() != null);
        try (RedisServer redis = RedisServer.start()) {
            scenario(redis.url());
        }
    }

    private void scenario(String store) throws Exception {
        try (TestServer t = TestServer.start(tmp.resolve("server"), store, "")) {
            String hook = t.add("githost", Role.HOOK);
            String agents = t.add("agents", Role.AGENT, "agent-*");
            JsonNode first = Json.read(t.post(
                            "/v1/leases/acquire",
                            agents,
                            "application/json",
                            "{\"repo\":\"app\",\"ref\":\"main\",\"holder\":\"agent-1\",\"ttl\":\"1m\"}")
                    .body());
            long token = first.get("token").asLong();
            String proof = first.get("proof").asText();

            t.restart();
            String a = "4".repeat(40);
            var accepted = push(t, hook, "0".repeat(40) + " " + a + " refs/heads/main\n", token, proof);
            assertEquals("accept", accepted.get("verdict").asText(), accepted.toString());

            assertEquals(
                    200,
                    t.post(
                                    "/v1/leases/release",
                                    agents,
                                    "application/json",
                                    "{\"repo\":\"app\",\"ref\":\"main\",\"holder\":\"agent-1\",\"token\":" + token
                                            + "}")
                            .status());
            t.restart();
            JsonNode second = Json.read(t.post(
                            "/v1/leases/acquire",
                            agents,
                            "application/json",
                            "{\"repo\":\"app\",\"ref\":\"main\",\"holder\":\"agent-2\",\"ttl\":\"1m\"}")
                    .body());
            assertTrue(second.get("token").asLong() > token, "tokens only go up across restarts: " + second);
            assertEquals(
                    first.get("generation").asText(), second.get("generation").asText());
            assertNotEquals(proof, second.get("proof").asText());

            t.restart();
            var fenced = push(t, hook, a + " " + "5".repeat(40) + " refs/heads/main\n", token, proof);
            assertEquals("reject", fenced.get("verdict").asText());
            assertTrue(fenced.get("lines").get(0).asText().endsWith("reason=superseded"), fenced.toString());
            var needs = push(
                    t,
                    hook,
                    a + " " + "5".repeat(40) + " refs/heads/main\n",
                    second.get("token").asLong(),
                    second.get("proof").asText());
            assertEquals("need", needs.get("verdict").asText(), "an update asks whether the old tip is kept");
            assertEquals(a, needs.get("need").get(0).get("ancestor").asText());
        }
    }

    private static JsonNode push(TestServer t, String hook, String stdin, long token, String proof) throws Exception {
        var r = t.post(
                "/v1/hook/pre-receive",
                hook,
                "application/json",
                Json.write(Map.of(
                        "stdin", stdin,
                        "env", Map.of("REMOTE_USER", "agent-1", "FENCE_REPO_ID", "app"),
                        "pushOptions", List.of("fence=" + token, "fence-proof=" + proof))));
        assertEquals(200, r.status(), r.body());
        return Json.read(r.body());
    }
}
