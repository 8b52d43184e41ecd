package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The endpoints {@code fence push}, {@code exec} and {@code status} use in server mode, at the HTTP
 * level: the proof of the current grant, moving the recorded SHA, and a holder's grants. Agent
 * credentials act only as their bound holders; proofs go only to the current grant and never reach the
 * server's log.
 */
class AgentApiTest {
    private static final String JSON = "application/json";
    private static final String SHA1 = "1".repeat(40);
    private static final String SHA2 = "2".repeat(40);
    private static final String SHA3 = "3".repeat(40);

    @TempDir
    static Path tmp;

    static TestServer t;
    static String agentA;
    static String agentB;
    static String auditor;
    static String hook;
    static String admin;

    @BeforeAll
    static void start() {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("agents.db"), "");
        agentA = t.add("agent-a", Role.AGENT);
        agentB = t.add("agent-b", Role.AGENT);
        auditor = t.add("reader", Role.AUDITOR);
        hook = t.add("githost", Role.HOOK);
        admin = t.add("ops", Role.ADMIN);
    }

    @AfterAll
    static void stop() {
        assertFalse(t.get("/metrics", null, null).body().contains("fp2."), "no proof reaches the metrics");
        t.close();
        String log = String.join("\n", t.log);
        assertFalse(log.contains("fp2."), "no proof reaches the server's log:\n" + log);
        for (String secret : new String[] {agentA, agentB, auditor, hook, admin}) {
            assertFalse(log.contains(secret.substring(secret.indexOf(':') + 1)), "a secret reached the log");
        }
    }

    static JsonNode json(TestServer.Response r) throws Exception {
        return Json.read(r.body());
    }

    /** Grants {@code resource} to {@code holder} with the recorded SHA; returns the grant. */
    static JsonNode acquire(String credential, String resource, String holder, String sha) throws Exception {
        var r = t.post(
                "/v1/leases/acquire",
                credential,
                JSON,
                "{\"resource\":\"" + resource + "\",\"holder\":\"" + holder + "\",\"ttl\":\"1m\",\"grantSha\":\"" + sha
                        + "\"}");
        assertEquals(200, r.status(), r.body());
        return json(r);
    }

    static TestServer.Response proof(String credential, String resource, String holder, long token) {
        return t.post(
                "/v1/leases/proof",
                credential,
                JSON,
                "{\"resource\":\"" + resource + "\",\"holder\":\"" + holder + "\",\"token\":" + token + "}");
    }

    static TestServer.Response move(
            String credential, String resource, String holder, long token, String expected, String moved) {
        return t.post(
                "/v1/leases/move-sha",
                credential,
                JSON,
                "{\"resource\":\"" + resource + "\",\"holder\":\"" + holder + "\",\"token\":" + token
                        + ",\"expectedSha\":\"" + expected + "\",\"newSha\":\"" + moved + "\"}");
    }

    static String recordedSha(String resource) throws Exception {
        var r = t.get("/v1/leases/status?resource=" + resource, auditor, null);
        assertEquals(200, r.status(), r.body());
        return json(r).get("lastLease").get("grantSha").asText();
    }

    @Test
    void namesWithALoneSurrogateAreRefusedNotFoldedIntoAnother() throws Exception {
        // As JSON sends them: two names that a store would both write as "d?".
        for (String name : new String[] {"d\\ud800", "d\\udbff"}) {
            var r = t.post(
                    "/v1/leases/acquire",
                    agentA,
                    JSON,
                    "{\"resource\":\"" + name + "\",\"holder\":\"agent-a\",\"ttl\":\"1m\"}");
            assertEquals(400, r.status(), r.body());
            assertTrue(r.body().contains("unpaired surrogate"), r.body());
        }
        var holder = t.post(
                "/v1/leases/acquire",
                admin,
                JSON,
                "{\"resource\":\"surrogates\",\"holder\":\"agent-a\\udc00\",\"ttl\":\"1m\"}");
        assertEquals(400, holder.status(), holder.body());
        JsonNode paired = acquire(agentA, "d\\ud83d\\ude00", "agent-a", SHA1);
        assertEquals("d\ud83d\ude00", paired.get("resource").asText(), "a pair is kept as it was sent");
    }

    @Test
    void theProofGoesOnlyToTheHolderOfTheCurrentGrant() throws Exception {
        String r = "git:app:refs/heads/proof";
        JsonNode g = acquire(agentA, r, "agent-a", SHA1);
        long token = g.get("token").asLong();

        var issued = proof(agentA, r, "agent-a", token);
        assertEquals(200, issued.status(), issued.body());
        assertEquals("proof", json(issued).get("status").asText());
        assertEquals(g.get("proof").asText(), json(issued).get("proof").asText(), "the grant's own proof");
        assertEquals(token, json(issued).get("token").asLong());

        var otherAgent = proof(agentB, r, "agent-a", token);
        assertEquals(403, otherAgent.status(), otherAgent.body());
        assertTrue(json(otherAgent).get("message").asText().contains("may not act as holder 'agent-a'"));
        assertFalse(otherAgent.body().contains("fp2."));
        for (String role : new String[] {auditor, hook}) {
            var wrongRole = proof(role, r, "agent-a", token);
            assertEquals(403, wrongRole.status(), wrongRole.body());
            assertFalse(wrongRole.body().contains("fp2."));
        }
        var none = proof(null, r, "agent-a", token);
        assertEquals(401, none.status());

        var neverGranted = proof(agentA, r, "agent-a", token + 5);
        assertEquals(409, neverGranted.status(), neverGranted.body());
        assertEquals("bad-proof", json(neverGranted).get("reason").asText());
        assertFalse(neverGranted.body().contains("fp2."));

        // agent-a's lease lapses in the story; agent-b takes the branch: agent-a's token is old now.
        var released = t.post(
                "/v1/leases/release",
                agentA,
                JSON,
                "{\"resource\":\"" + r + "\",\"holder\":\"agent-a\",\"token\":" + token + "}");
        assertEquals(200, released.status(), released.body());
        var afterRelease = proof(agentA, r, "agent-a", token);
        assertEquals(409, afterRelease.status(), afterRelease.body());
        assertEquals("released", json(afterRelease).get("reason").asText());
        assertFalse(afterRelease.body().contains("fp2."));

        long tokenB = acquire(agentB, r, "agent-b", SHA1).get("token").asLong();
        var old = proof(agentA, r, "agent-a", token);
        assertEquals(409, old.status(), old.body());
        JsonNode f = json(old);
        assertEquals("fenced", f.get("status").asText());
        assertEquals("superseded", f.get("reason").asText());
        assertEquals(tokenB, f.get("current").asLong());
        assertEquals("agent-b", f.get("holder").asText());
        assertTrue(f.get("message").get(0).asText().startsWith("FENCED resource=" + r + " "), old.body());
        assertFalse(old.body().contains("fp2."), "never a proof for an old token");

        var adminProof = proof(admin, r, "agent-b", tokenB);
        assertEquals(200, adminProof.status(), "admin may do everything: " + adminProof.body());
    }

    @Test
    void theRecordedShaMovesOnlyForTheCurrentHolderFromTheExpectedSha() throws Exception {
        String r = "git:app:refs/heads/move";
        long token = acquire(agentA, r, "agent-a", SHA1).get("token").asLong();

        var otherAgent = move(agentB, r, "agent-a", token, SHA1, SHA3);
        assertEquals(403, otherAgent.status(), otherAgent.body());
        var auditorMove = move(auditor, r, "agent-a", token, SHA1, SHA3);
        assertEquals(403, auditorMove.status(), auditorMove.body());
        assertEquals(SHA1, recordedSha(r));

        var wrongExpected = move(agentA, r, "agent-a", token, SHA2, SHA3);
        assertEquals(409, wrongExpected.status(), wrongExpected.body());
        assertEquals("fenced", json(wrongExpected).get("status").asText());
        assertEquals(SHA1, recordedSha(r));

        var notAnId = move(agentA, r, "agent-a", token, SHA1, "main");
        assertEquals(400, notAnId.status(), notAnId.body());
        assertTrue(json(notAnId).get("message").asText().contains("newSha"), notAnId.body());

        var moved = move(agentA, r, "agent-a", token, SHA1, SHA2);
        assertEquals(200, moved.status(), moved.body());
        assertEquals("moved", json(moved).get("status").asText());
        assertEquals(SHA2, json(moved).get("grantSha").asText());
        assertEquals(token, json(moved).get("token").asLong());
        assertEquals(SHA2, recordedSha(r));

        var again = move(agentA, r, "agent-a", token, SHA1, SHA3);
        assertEquals(409, again.status(), "the expected SHA is stale now: " + again.body());
        assertEquals(SHA2, recordedSha(r));

        var released = t.post(
                "/v1/leases/release",
                agentA,
                JSON,
                "{\"resource\":\"" + r + "\",\"holder\":\"agent-a\",\"token\":" + token + "}");
        assertEquals(200, released.status(), released.body());
        long tokenB = acquire(agentB, r, "agent-b", SHA2).get("token").asLong();
        var stale = move(agentA, r, "agent-a", token, SHA2, SHA3);
        assertEquals(409, stale.status(), stale.body());
        assertEquals("superseded", json(stale).get("reason").asText());
        assertEquals(tokenB, json(stale).get("current").asLong());
        assertEquals(SHA2, recordedSha(r), "a superseded holder cannot move its successor's SHA");
    }

    @Test
    void aHoldersGrantsAreForItsOwnAgentCredentialAnAuditorOrAnAdmin() throws Exception {
        long t1 = acquire(agentA, "git:app:refs/heads/g1", "agent-a", SHA1)
                .get("token")
                .asLong();
        long t2 = acquire(agentA, "git:app:refs/heads/g2", "agent-a", SHA1)
                .get("token")
                .asLong();
        acquire(agentB, "git:app:refs/heads/g3", "agent-b", SHA1);

        var own = t.get("/v1/leases/grants?holder=agent-a&limit=0", agentA, JSON);
        assertEquals(200, own.status(), own.body());
        JsonNode events = json(own);
        assertTrue(events.isArray(), own.body());
        boolean saw1 = false;
        boolean saw2 = false;
        for (JsonNode e : events) {
            assertEquals("grant", e.get("type").asText(), own.body());
            assertEquals("agent-a", e.get("holder").asText(), own.body());
            saw1 |= e.get("token").asLong() == t1;
            saw2 |= e.get("token").asLong() == t2;
        }
        assertTrue(saw1 && saw2, own.body());
        assertFalse(own.body().contains("fp2."), "grant events carry no proof");

        var one = t.get("/v1/leases/grants?holder=agent-a&resource=git:app:refs/heads/g2", agentA, JSON);
        assertEquals(200, one.status(), one.body());
        assertEquals(1, json(one).size(), one.body());
        assertEquals(t2, json(one).get(0).get("token").asLong());
        var byRepoRef = t.get("/v1/leases/grants?holder=agent-a&repo=app&ref=g1&limit=1", agentA, JSON);
        assertEquals(t1, json(byRepoRef).get(0).get("token").asLong(), byRepoRef.body());

        var lines = t.get("/v1/leases/grants?holder=agent-a", agentA, null);
        assertEquals(200, lines.status());
        assertTrue(lines.contentType().startsWith("application/x-ndjson"), lines.contentType());

        var otherAgent = t.get("/v1/leases/grants?holder=agent-a", agentB, JSON);
        assertEquals(403, otherAgent.status(), otherAgent.body());
        var reader = t.get("/v1/leases/grants?holder=agent-a", auditor, JSON);
        assertEquals(200, reader.status(), reader.body());
        var ops = t.get("/v1/leases/grants?holder=agent-b", admin, JSON);
        assertEquals(200, ops.status(), ops.body());
        var hookRole = t.get("/v1/leases/grants?holder=agent-a", hook, JSON);
        assertEquals(403, hookRole.status(), hookRole.body());
        var noHolder = t.get("/v1/leases/grants", auditor, JSON);
        assertEquals(400, noHolder.status(), noHolder.body());
        var badSince = t.get("/v1/leases/grants?holder=agent-a&since=soon", agentA, JSON);
        assertEquals(400, badSince.status(), badSince.body());
    }
}
