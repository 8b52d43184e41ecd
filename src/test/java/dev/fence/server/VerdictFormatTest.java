package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hook endpoints answer a request that carries a nonce with the versioned verdict, text or JSON. */
class VerdictFormatTest {
    private static final String FORM = "application/x-www-form-urlencoded";
    private static final String NONCE = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

    @TempDir
    static Path tmp;

    static TestServer t;
    static String hook;

    @BeforeAll
    static void start() {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("format.db"), "agent-pushers = bot-*\n");
        hook = t.add("githost", Role.HOOK);
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    static String form(String stdin, String pusher, String nonce) {
        return "stdin=" + URLEncoder.encode(stdin, StandardCharsets.UTF_8) + "&env=REMOTE_USER%3D" + pusher
                + "&env=FENCE_REPO_ID%3Dfmt" + (nonce == null ? "" : "&nonce=" + nonce);
    }

    @Test
    void aTextVerdictStartsWithTheVersionTheNonceAndTheExitCode() {
        String create = "0".repeat(40) + " " + "3".repeat(40) + " refs/heads/main\n";
        var accepted = t.post("/v1/hook/pre-receive", hook, FORM, form(create, "alice", NONCE), "text/plain");
        assertEquals(200, accepted.status(), accepted.body());
        assertTrue(accepted.body().startsWith("fence-verdict/1 nonce=" + NONCE + " exit=0\n"), accepted.body());

        var refused = t.post("/v1/hook/pre-receive", hook, FORM, form(create, "bot-1", NONCE), "text/plain");
        assertTrue(
                refused.body()
                        .startsWith(
                                "fence-verdict/1 nonce=" + NONCE + " exit=1\nFENCED resource=git:fmt:refs/heads/main"),
                refused.body());

        var landed = t.post("/v1/hook/post-receive", hook, FORM, form(create, "alice", NONCE), "text/plain");
        assertTrue(landed.body().startsWith("fence-verdict/1 nonce=" + NONCE + " exit=0\n"), landed.body());

        var unversioned = t.post("/v1/hook/pre-receive", hook, FORM, form(create, "alice", null), "text/plain");
        assertTrue(unversioned.body().startsWith("accept\n"), "without a nonce, the answer of earlier versions");
    }

    @Test
    void aTextVerdictOfThousandsOfRefusalsStaysWithinWhatTheShimReads() {
        StringBuilder stdin = new StringBuilder();
        for (int i = 0; i < 2_000; i++) {
            stdin.append("0".repeat(40))
                    .append(' ')
                    .append("4".repeat(40))
                    .append(" refs/heads/many-")
                    .append(i)
                    .append('\n');
        }
        var refused = t.post("/v1/hook/pre-receive", hook, FORM, form(stdin.toString(), "bot-1", NONCE), "text/plain");
        assertEquals(200, refused.status());
        String body = refused.body();
        assertTrue(body.startsWith("fence-verdict/1 nonce=" + NONCE + " exit=1\nFENCED "), body.substring(0, 200));
        int bytes = body.getBytes(StandardCharsets.UTF_8).length;
        assertTrue(bytes < 256 * 1024, "the shim reads at most 256 KiB: " + bytes);
        String last = body.substring(body.lastIndexOf('\n', body.length() - 2) + 1);
        assertTrue(
                last.matches("fence: \\d+ more lines of this answer are not shown; fence audit lists every decision\n"),
                last);
    }

    @Test
    void linesPastTheBoundAreLeftForTheNextRoundOrCounted() {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            lines.add("need " + "1".repeat(40) + " " + String.format("%040d", i));
        }
        StringBuilder asked = new StringBuilder();
        int n = dev.fence.server.client.VerdictFormat.appendWithin(asked, lines);
        assertTrue(n > 1_000 && n < 5_000, "asked " + n);
        assertTrue(asked.length() <= dev.fence.server.client.VerdictFormat.MAX_TEXT_LINES_BYTES, "" + asked.length());
        assertEquals(n, asked.toString().split("\n").length);
        StringBuilder shown = new StringBuilder();
        dev.fence.server.client.VerdictFormat.appendLines(shown, lines);
        assertTrue(shown.toString()
                .endsWith("fence: " + (5_000 - n)
                        + " more lines of this answer are not shown; fence audit lists every decision\n"));
    }

    @Test
    void anAncestryQuestionStartsWithTheVersionAndTheNonceToo() throws Exception {
        String agent = t.add("agent-a", Role.AGENT);
        var grant = t.post(
                "/v1/leases/acquire",
                agent,
                "application/json",
                "{\"repo\":\"fmt\",\"ref\":\"refs/heads/need\",\"holder\":\"agent-a\",\"ttl\":\"5m\"}");
        JsonNode g = Json.read(grant.body());
        String options = "&option=fence%3D" + g.get("token").asText() + "&option=fence-proof%3D"
                + URLEncoder.encode(g.get("proof").asText(), StandardCharsets.UTF_8);
        String create = "0".repeat(40) + " " + "6".repeat(40) + " refs/heads/need\n";
        var written =
                t.post("/v1/hook/pre-receive", hook, FORM, form(create, "agent-a", NONCE) + options, "text/plain");
        assertTrue(written.body().startsWith("fence-verdict/1 nonce=" + NONCE + " exit=0\n"), written.body());
        // A tokenless push over commits written under a token: the server asks whether they are kept.
        String over = "6".repeat(40) + " " + "7".repeat(40) + " refs/heads/need\n";
        var need = t.post("/v1/hook/pre-receive", hook, FORM, form(over, "alice", NONCE), "text/plain");
        assertEquals(
                "fence-verdict/1 nonce=" + NONCE + " need\nneed " + "6".repeat(40) + " " + "7".repeat(40) + "\n",
                need.body());
    }

    @Test
    void aJsonVerdictCarriesTheFormatAndTheNonce() throws Exception {
        String create = "0".repeat(40) + " " + "5".repeat(40) + " refs/heads/json\n";
        var r = t.post(
                "/v1/hook/pre-receive",
                hook,
                "application/json",
                Json.write(Map.of(
                        "stdin",
                        create,
                        "env",
                        Map.of("REMOTE_USER", "alice", "FENCE_REPO_ID", "fmt"),
                        "nonce",
                        NONCE)));
        JsonNode n = Json.read(r.body());
        assertEquals("fence-verdict/1", n.get("format").asText(), r.body());
        assertEquals(NONCE, n.get("nonce").asText());
        assertEquals("accept", n.get("verdict").asText());
        assertEquals(0, n.get("exitCode").asInt());
    }

    @Test
    void aMalformedNonceIsABadRequest() {
        for (String nonce : new String[] {"short", "has%20space%20in%20it%20xxxx", "x".repeat(129)}) {
            var r = t.post("/v1/hook/pre-receive", hook, FORM, form("", "alice", nonce), "text/plain");
            assertEquals(400, r.status(), nonce);
            assertTrue(r.body().contains("'nonce' must be 16 to 128"), r.body());
        }
    }
}
