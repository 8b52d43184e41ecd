package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.cli.Context;
import dev.fence.cli.Main;
import dev.fence.json.Json;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP API on a SQLite store: shapes, status codes, authentication, limits, and the Java clients. */
class HookServerApiTest {
    private static final String JSON = "application/json";
    private static final String FORM = "application/x-www-form-urlencoded";

    @TempDir
    static Path tmp;

    static TestServer t;
    static String hook;
    static String agent;
    static String auditor;
    static String admin;

    @BeforeAll
    static void start() {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("api.db"), "agent-pushers = bot-*\n");
        hook = t.add("githost", Role.HOOK);
        agent = t.add("agent-a", Role.AGENT, "agent-a", "agent-a/*");
        auditor = t.add("reader", Role.AUDITOR);
        admin = t.add("ops", Role.ADMIN);
    }

    @AfterAll
    static void stop() {
        t.close();
        String log = String.join("\n", t.log);
        for (String secret : new String[] {hook, agent, auditor, admin}) {
            assertFalse(log.contains(secret.substring(secret.indexOf(':') + 1)), "a secret reached the log");
        }
    }

    static JsonNode json(TestServer.Response r) throws Exception {
        return Json.read(r.body());
    }

    static String acquireBody(String resource, String holder) {
        return "{\"resource\":\"" + resource + "\",\"holder\":\"" + holder + "\",\"ttl\":\"30s\"}";
    }

    @Test
    void healthReadinessAndMetricsNeedNoCredential() {
        assertEquals(200, t.get("/healthz", null, null).status());
        var ready = t.get("/readyz", null, null);
        assertEquals(200, ready.status(), ready.body());
        assertTrue(ready.body().contains("\"status\":\"ready\""), ready.body());
        var m = t.get("/metrics", null, null);
        assertEquals(200, m.status());
        assertTrue(m.contentType().startsWith("text/plain"), m.contentType());
        assertTrue(m.body().contains("fence_http_request_duration_seconds_bucket"), m.body());
        assertEquals(404, t.get("/v2/nothing", null, null).status());
        assertEquals(405, t.get("/v1/leases/acquire", agent, null).status());
    }

    @Test
    void leaseOperationsHaveTheCliJsonShapesAndStatusCodes() throws Exception {
        var granted = t.post("/v1/leases/acquire", agent, JSON, acquireBody("db/one", "agent-a"));
        assertEquals(200, granted.status(), granted.body());
        JsonNode g = json(granted);
        assertEquals("granted", g.get("status").asText());
        for (String field : new String[] {"token", "proof", "expiresAt", "generation", "grantedAt", "holder"}) {
            assertTrue(g.hasNonNull(field), field + " in " + granted.body());
        }
        long token = g.get("token").asLong();

        var busy = t.post("/v1/leases/acquire", admin, JSON, acquireBody("db/one", "someone-else"));
        assertEquals(409, busy.status());
        assertEquals("busy", json(busy).get("status").asText());
        assertEquals("agent-a", json(busy).get("holder").asText());
        assertTrue(json(busy).hasNonNull("expiresAt"));

        var renewed =
                t.post("/v1/leases/renew", agent, FORM, "resource=db/one&holder=agent-a&token=" + token + "&ttl=1m");
        assertEquals(200, renewed.status(), renewed.body());
        assertEquals("renewed", json(renewed).get("status").asText());

        var fenced = t.post(
                "/v1/leases/renew",
                agent,
                JSON,
                "{\"resource\":\"db/one\",\"holder\":\"agent-a\",\"token\":" + (token - 1) + "}");
        assertEquals(409, fenced.status());
        JsonNode f = json(fenced);
        assertEquals("fenced", f.get("status").asText());
        // An older token than the first one this store ever granted predates its generation.
        assertEquals("old-generation", f.get("reason").asText());
        assertTrue(f.get("message").get(0).asText().startsWith("FENCED resource=db/one ref=- token="), fenced.body());
        assertFalse(fenced.body().contains(g.get("proof").asText()), "proofs are never echoed");

        var status = t.get("/v1/leases/status?resource=db/one", auditor, null);
        assertEquals(200, status.status(), status.body());
        assertEquals(token, json(status).get("latestGranted").asLong());
        assertFalse(status.body().contains("proof"));

        var released = t.post(
                "/v1/leases/release",
                agent,
                JSON,
                "{\"resource\":\"db/one\",\"holder\":\"agent-a\",\"token\":" + token + ",\"proof\":\""
                        + g.get("proof").asText() + "\"}");
        assertEquals(200, released.status(), released.body());
        assertEquals("released", json(released).get("status").asText());

        var bad = t.post(
                "/v1/leases/acquire", agent, JSON, "{\"resource\":\"db/one\",\"holder\":\"agent-a\",\"ttl\":\"soon\"}");
        assertEquals(400, bad.status());
        assertEquals(2, json(bad).get("exitCode").asInt());
        assertTrue(json(bad).get("message").asText().contains("ttl"), bad.body());
    }

    @Test
    void credentialsAreCheckedAndRolesEnforced() throws Exception {
        var none = t.post("/v1/leases/acquire", null, JSON, acquireBody("db/auth", "agent-a"));
        assertEquals(401, none.status());
        assertTrue(json(none).get("message").asText().contains("Bearer"), none.body());
        var wrongSecret =
                t.post("/v1/leases/acquire", "agent-a:" + "x".repeat(43), JSON, acquireBody("db/auth", "agent-a"));
        assertEquals(401, wrongSecret.status());
        assertEquals(
                401,
                t.post("/v1/leases/acquire", "nobody:" + "y".repeat(43), JSON, acquireBody("db/auth", "agent-a"))
                        .status());

        var wrongRole = t.post("/v1/leases/acquire", hook, JSON, acquireBody("db/auth", "agent-a"));
        assertEquals(403, wrongRole.status());
        assertTrue(json(wrongRole).get("message").asText().contains("needs agent or admin"), wrongRole.body());
        assertEquals(403, t.get("/v1/audit", agent, null).status());
        assertEquals(
                403,
                t.post("/v1/hook/pre-receive", auditor, JSON, "{\"stdin\":\"\"}")
                        .status());

        var otherHolder = t.post("/v1/leases/acquire", agent, JSON, acquireBody("db/auth", "agent-b"));
        assertEquals(403, otherHolder.status());
        assertTrue(json(otherHolder).get("message").asText().contains("may not act as holder 'agent-b'"));
        assertEquals(
                200,
                t.post("/v1/leases/acquire", agent, JSON, acquireBody("db/auth2", "agent-a/sub"))
                        .status());

        String temp = t.add("temp-agent", Role.AGENT);
        assertEquals(
                200,
                t.post("/v1/leases/acquire", temp, JSON, acquireBody("db/auth3", "temp-agent"))
                        .status());
        t.revoke("temp-agent");
        var revoked = t.post("/v1/leases/acquire", temp, JSON, acquireBody("db/auth4", "temp-agent"));
        assertEquals(401, revoked.status(), "a revoked credential stops working without a restart");

        // Whoever may write the file may add a credential of any role: a file others may write is refused
        // (503, as any invalid file) until it is theirs alone again; a chmod alone is noticed.
        var mode = java.nio.file.Files.getPosixFilePermissions(t.credentials);
        java.nio.file.Files.setPosixFilePermissions(
                t.credentials, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        var open = t.post("/v1/leases/acquire", agent, JSON, acquireBody("db/auth5", "agent-a"));
        assertEquals(503, open.status(), open.body());
        assertTrue(
                t.log.stream().anyMatch(l -> l.contains("may be written by its group or by others")), t.log.toString());
        java.nio.file.Files.setPosixFilePermissions(t.credentials, mode);
        assertEquals(
                200,
                t.post("/v1/leases/acquire", agent, JSON, acquireBody("db/auth5", "agent-a"))
                        .status());
    }

    /**
     * A request refused before its body is read leaves a connection the server closes: the reply says so,
     * or a client that keeps connections alive would send its next request on it and get no answer at all
     * (a lease call failing at random after another caller's refusal).
     */
    @Test
    void aRequestRefusedBeforeItsBodyIsReadTellsTheClientNotToReuseTheConnection() throws Exception {
        URI server = URI.create(t.url());
        String[][] refused = {
            {"/v1/hook/pre-receive", auditor, "403"}, {"/v1/leases/acquire", "nobody:" + "y".repeat(43), "401"}
        };
        for (String[] r : refused) {
            try (Socket s = new Socket(server.getHost(), server.getPort())) {
                s.setSoTimeout(10_000);
                // The headers only: the body, announced, is not sent before the answer.
                String head = "POST " + r[0] + " HTTP/1.1\r\nHost: " + server.getHost() + "\r\nAuthorization: Bearer "
                        + r[1] + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n";
                s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertTrue(answer.startsWith("HTTP/1.1 " + r[2] + " "), answer);
                String headers = answer.substring(0, answer.indexOf("\r\n\r\n")).toLowerCase(java.util.Locale.ROOT);
                assertTrue(headers.contains("\r\nconnection: close"), r[0] + ": " + answer);
            }
        }
        // A request whose body was read keeps its connection, refused or not.
        try (Socket s = new Socket(server.getHost(), server.getPort())) {
            s.setSoTimeout(10_000);
            String body = "{\"resource\":\"db/keep\",\"holder\":\"agent-a\",\"ttl\":\"soon\"}";
            String request = "POST /v1/leases/acquire HTTP/1.1\r\nHost: " + server.getHost()
                    + "\r\nAuthorization: Bearer " + agent + "\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length() + "\r\n\r\n" + body;
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            byte[] buffer = new byte[8192];
            int n = s.getInputStream().read(buffer);
            String answer = new String(buffer, 0, Math.max(0, n), StandardCharsets.ISO_8859_1);
            assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
            assertFalse(answer.toLowerCase(java.util.Locale.ROOT).contains("\r\nconnection: close"), answer);
        }
    }

    @Test
    void malformedAndOversizedBodiesGetClearMessages() throws Exception {
        var notJson = t.post("/v1/hook/pre-receive", hook, JSON, "{\"stdin\": ");
        assertEquals(400, notJson.status());
        assertTrue(
                json(notJson).get("message").asText().startsWith("the request body is not valid JSON"), notJson.body());
        var jsonAsForm = t.post("/v1/leases/acquire", agent, FORM, acquireBody("db/x", "agent-a"));
        assertEquals(400, jsonAsForm.status());
        assertTrue(json(jsonAsForm).get("message").asText().contains("Content-Type: application/json"));
        var unknown = t.post("/v1/hook/pre-receive", hook, JSON, "{\"stdin\":\"\",\"policy\":\"allow\"}");
        assertEquals(400, unknown.status());
        assertTrue(json(unknown).get("message").asText().contains("unknown field 'policy'"));
        assertEquals(
                415, t.post("/v1/hook/pre-receive", hook, "text/xml", "<push/>").status());
        var badFact = t.post("/v1/hook/pre-receive", hook, FORM, "stdin=&fact=abc+def+yes");
        assertEquals(400, badFact.status());

        String huge = "{\"stdin\":\"" + "a".repeat(5 * 1024 * 1024) + "\"}";
        var tooBig = t.post("/v1/hook/pre-receive", hook, JSON, huge);
        assertEquals(413, tooBig.status());
        assertTrue(json(tooBig).get("message").asText().contains("larger than the server's limit of 4194304 bytes"));
        var tooBigText = t.post("/v1/hook/pre-receive", hook, JSON, huge, "text/plain");
        assertEquals(413, tooBigText.status());
        assertTrue(tooBigText.body().startsWith("error\n"), tooBigText.body());
    }

    @Test
    void aTenThousandRefPushFitsAndIsJudged() throws Exception {
        StringBuilder stdin = new StringBuilder();
        String sha = "1".repeat(40);
        for (int i = 0; i < 10_000; i++) {
            stdin.append("0".repeat(40))
                    .append(' ')
                    .append(sha)
                    .append(" refs/tags/release/v")
                    .append(i)
                    .append('\n');
        }
        String body = Json.write(
                Map.of("stdin", stdin.toString(), "env", Map.of("REMOTE_USER", "ci", "FENCE_REPO_ID", "big")));
        assertTrue(body.length() > 1_000_000, "about 1 MB");
        var r = t.post("/v1/hook/pre-receive", hook, JSON, body);
        assertEquals(200, r.status(), r.body());
        assertEquals("accept", json(r).get("verdict").asText());
        assertEquals("untouched", json(r).get("reason").asText());
    }

    @Test
    void hookVerdictsComeAsJsonOrPlainTextAndTheLedgerIsQueryable() throws Exception {
        String sha = "2".repeat(40);
        String line = "0".repeat(40) + " " + sha + " refs/heads/main\n";
        long answered = t.server().verdictsAnswered();
        var text = t.post(
                "/v1/hook/pre-receive",
                hook,
                FORM,
                "stdin=" + java.net.URLEncoder.encode(line, java.nio.charset.StandardCharsets.UTF_8)
                        + "&env=REMOTE_USER%3Dbot-1&env=FENCE_REPO_ID%3Dled&env=FENCE_PUSHER_POLICY%3Dallow",
                "text/plain");
        assertEquals(200, text.status(), text.body());
        assertTrue(
                text.body()
                        .startsWith("reject\nFENCED resource=git:led:refs/heads/main ref=refs/heads/main token=0"
                                + " current=0 reason=token-required\n"),
                "the server's policy applies, not one sent with the push:\n" + text.body());
        var accepted = t.post(
                "/v1/hook/pre-receive",
                hook,
                JSON,
                Json.write(Map.of("stdin", line, "env", Map.of("REMOTE_USER", "alice", "FENCE_REPO_ID", "led"))));
        assertEquals("accept", json(accepted).get("verdict").asText(), accepted.body());
        assertEquals(0, json(accepted).get("exitCode").asInt());
        assertEquals("bumped", json(accepted).get("reason").asText());
        // What fence serve's warm-up watches to stop early on a busy server: every verdict, a refusal too.
        assertEquals(answered + 2, t.server().verdictsAnswered());

        var lines = t.get("/v1/audit?repo=led&rejected=true", auditor, null);
        assertEquals(200, lines.status(), lines.body());
        assertEquals(1, lines.body().strip().split("\n").length, lines.body());
        assertTrue(lines.body().contains("\"reason\":\"token-required\""), lines.body());
        var array = t.get("/v1/audit?repo=led", auditor, "application/json");
        assertTrue(json(array).isArray() && json(array).size() == 2, array.body());
        var timeline = t.get("/v1/audit/timeline?repo=led&ref=main", admin, null);
        assertEquals(200, timeline.status(), timeline.body());
        assertEquals(2, timeline.body().strip().split("\n").length, timeline.body());
        assertEquals(400, t.get("/v1/audit?since=yesterday", auditor, null).status());
    }

    /** A form request to the pre-receive endpoint, answered in plain text. */
    static TestServer.Response preReceive(String stdin, String... fields) {
        StringBuilder body = new StringBuilder("stdin=")
                .append(java.net.URLEncoder.encode(stdin, java.nio.charset.StandardCharsets.UTF_8))
                .append("&env=REMOTE_USER%3Dalice&env=FENCE_REPO_ID%3Dsym");
        for (String f : fields) {
            int eq = f.indexOf('=');
            body.append('&')
                    .append(f, 0, eq)
                    .append('=')
                    .append(java.net.URLEncoder.encode(f.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8));
        }
        return t.post("/v1/hook/pre-receive", hook, FORM, body.toString(), "text/plain");
    }

    /**
     * The server decides symbolic refs from the facts a hook sent, and only for names the push updates: a
     * fact about another name changes nothing, and facts it cannot trust (two for one name, a bad target,
     * too many levels) refuse the push rather than let it through.
     */
    @Test
    void symbolicRefFactsOnlyCountForPushedNamesAndDoubtfulOnesRefuse() throws Exception {
        String sha = "3".repeat(40);
        String notes = "0".repeat(40) + " " + sha + " refs/notes/sym-alias\n";
        // A plain push with facts about names it does not update: accepted as without them.
        var plain = preReceive(
                "0".repeat(40) + " " + sha + " refs/tags/v-sym\n",
                "symref=refs/heads/other refs/heads/main",
                "symref-problem=refs/heads/main more than 5 levels of symbolic refs, or a loop");
        assertEquals(200, plain.status(), plain.body());
        assertEquals("accept\n", plain.body());
        // Outside the fenced patterns, and leading outside them: the server knows its patterns and accepts.
        var open = preReceive(notes, "symref=refs/notes/sym-alias refs/notes/sym-target");
        assertEquals("accept\n", open.body());
        // Into a fenced ref through an unfenced name: refused with the Java hook's lines.
        var fenced = preReceive(notes, "symref=refs/notes/sym-alias refs/notes/sym-mid refs/heads/main");
        assertEquals(
                "reject\nREJECTED ref=refs/notes/sym-alias reason=symbolic-ref\nfence: refs/notes/sym-alias is a"
                        + " symbolic ref to refs/notes/sym-mid -> refs/heads/main: git would update refs/heads/main,"
                        + " which fence guards under its own name. Push to refs/heads/main itself instead (for example:"
                        + " git push origin <commit>:refs/heads/main, with the lease options for refs/heads/main).\n"
                        + "fence: the push was refused as a whole; nothing was recorded. Pushing under another name"
                        + " that points at the same ref is refused the same way.\n",
                fenced.body());
        // A second, forged answer for the same name cannot make it an open one.
        var twice = preReceive(
                notes,
                "symref=refs/notes/sym-alias refs/heads/main",
                "symref=refs/notes/sym-alias refs/notes/sym-target");
        assertTrue(
                twice.body().startsWith("reject\nREJECTED ref=refs/notes/sym-alias reason=symbolic-ref\n"),
                twice.body());
        assertTrue(twice.body().contains("(the hook sent two answers for it)"), twice.body());
        for (String doubtful : new String[] {
            "symref=refs/notes/sym-alias refs/notes/../heads/main",
            "symref=refs/notes/sym-alias refs/notes/a refs/notes/b refs/notes/c refs/notes/d refs/notes/e refs/notes/f",
            "symref=refs/notes/sym-alias",
            "symref-problem=refs/notes/sym-alias"
        }) {
            var r = preReceive(notes, doubtful);
            assertTrue(
                    r.body().startsWith("reject\nREJECTED ref=refs/notes/sym-alias reason=symbolic-ref\n"),
                    doubtful + ": " + r.body());
        }
        // Pushed with its target and the same ids, git skips the symbolic ref; the target is judged itself.
        var skipped = preReceive(
                notes + "0".repeat(40) + " " + sha + " refs/heads/sym-main\n",
                "symref=refs/notes/sym-alias refs/heads/sym-main");
        assertTrue(skipped.body().startsWith("accept\n"), skipped.body());
        assertEquals(400, preReceive(notes, "symref=").status());
    }

    /**
     * Whether the hook's repository ignores case, and the spellings it has, come as facts (form fields or
     * JSON) and are judged with the Java hook's rule; without them the server takes the repository as one
     * where case counts, and a malformed fact is a request refused.
     */
    @Test
    void caseFactsDecideAnotherSpellingOfAFencedRef() throws Exception {
        String sha = "4".repeat(40);
        String upper = "0".repeat(40) + " " + sha + " refs/heads/CASE-MAIN\n";
        assertEquals("accept\n", preReceive(upper).body(), "where case counts, another branch");
        var refused = preReceive(upper, "ignorecase=true", "refcase=refs/heads/CASE-MAIN refs/heads/case-main");
        assertTrue(
                refused.body().startsWith("reject\nREJECTED ref=refs/heads/CASE-MAIN reason=ref-case-alias\n"),
                refused.body());
        assertTrue(refused.body().contains("fence guards as refs/heads/case-main"), refused.body());
        var json = t.post(
                "/v1/hook/pre-receive",
                hook,
                JSON,
                "{\"stdin\":\"" + upper.replace("\n", "\\n") + "\",\"env\":{\"REMOTE_USER\":\"alice\","
                        + "\"FENCE_REPO_ID\":\"sym\"},\"ignorecase\":true,"
                        + "\"refcases\":[\"refs/heads/CASE-MAIN refs/heads/case-main\"]}");
        assertEquals(200, json.status(), json.body());
        assertEquals("ref-case-alias", json(json).get("reason").asText(), json.body());
        assertEquals(400, preReceive(upper, "ignorecase=maybe").status());
        assertEquals(
                400,
                preReceive(upper, "ignorecase=true", "refcase=refs/heads/CASE-MAIN")
                        .status());
    }

    /**
     * A namespace the hook's repository spells otherwise comes as a fact too (form field or JSON): with it
     * the server refuses the push's fenced refs and names the namespace's spelling, and a fact that is not a
     * namespace is a request refused. (Without it the push is judged as before: CaseAliasesTest; here every
     * request stays clear of the store, which other tests' tokens depend on.)
     */
    @Test
    void aNamespaceFactDecidesAnotherSpellingOfTheNamespace() throws Exception {
        String main = "0".repeat(40) + " " + "5".repeat(40) + " refs/heads/nscase-main\n";
        var refused = preReceive(main, "env=GIT_NAMESPACE=T9", "ignorecase=ascii", "nscase=t9");
        assertTrue(
                refused.body().startsWith("reject\nREJECTED ref=refs/heads/nscase-main reason=ref-case-alias\n"),
                refused.body());
        assertTrue(refused.body().contains("Push with GIT_NAMESPACE=t9 instead"), refused.body());
        var json = t.post(
                "/v1/hook/pre-receive",
                hook,
                JSON,
                "{\"stdin\":\"" + main.replace("\n", "\\n") + "\",\"env\":{\"REMOTE_USER\":\"alice\","
                        + "\"FENCE_REPO_ID\":\"sym\",\"GIT_NAMESPACE\":\"T9\"},\"ignorecase\":true,"
                        + "\"nscases\":[\"t9\"]}");
        assertEquals(200, json.status(), json.body());
        assertEquals("ref-case-alias", json(json).get("reason").asText(), json.body());
        assertEquals(
                400,
                preReceive(main, "env=GIT_NAMESPACE=T9", "ignorecase=ascii", "nscase=t9 t8")
                        .status());
    }

    record Run(int exit, String out, String err) {}

    static Run fence(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Map<String, String> e = new HashMap<>(env);
        e.put("HOME", tmp.toString());
        int code = Main.run(
                new Context(
                        new ByteArrayInputStream(new byte[0]),
                        new PrintWriter(out, true),
                        new PrintWriter(err, true),
                        e,
                        Clock.systemUTC(),
                        tmp),
                args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void theCliTalksToTheServerWithTheSameExitCodes() {
        Map<String, String> env = Map.of("FENCE_CREDENTIAL", agent, "FENCE_SERVER", t.url());
        var acquired = fence(env, "lease", "acquire", "--resource", "cli/r", "--holder", "agent-a");
        assertEquals(0, acquired.exit(), acquired.err());
        assertTrue(acquired.out().startsWith("granted cli/r to agent-a: token "), acquired.out());
        var busy = fence(
                Map.of("FENCE_CREDENTIAL", admin),
                "lease",
                "acquire",
                "--server",
                t.url(),
                "--resource",
                "cli/r",
                "--holder",
                "other");
        assertEquals(4, busy.exit(), busy.err());
        assertTrue(busy.err().startsWith("busy: cli/r is held by agent-a until "), busy.err());
        var stale = fence(
                env, "lease", "renew", "--resource", "cli/r", "--holder", "agent-a", "--ttl", "30s", "--token", "1");
        assertEquals(3, stale.exit(), stale.err());
        assertTrue(stale.err().startsWith("FENCED resource=cli/r ref=- token=1 current="), stale.err());
        var status = fence(env, "lease", "status", "--resource", "cli/r", "--json");
        assertEquals(0, status.exit(), status.err());
        assertTrue(status.out().contains("\"holder\":\"agent-a\""), status.out());

        var forbidden = fence(env, "lease", "acquire", "--resource", "cli/r2", "--holder", "agent-b");
        assertEquals(6, forbidden.exit(), forbidden.err());
        assertTrue(forbidden.err().contains("may not act as holder 'agent-b'"), forbidden.err());
        var noCredential = fence(Map.of("FENCE_SERVER", t.url()), "lease", "status", "--resource", "cli/r");
        assertEquals(6, noCredential.exit());
        assertTrue(noCredential.err().contains("FENCE_CREDENTIAL"), noCredential.err());
        var down = fence(
                Map.of("FENCE_CREDENTIAL", agent),
                "lease",
                "status",
                "--server",
                "http://127.0.0.1:1",
                "--resource",
                "cli/r");
        assertEquals(5, down.exit(), down.err());
        var both = fence(env, "lease", "status", "--server", t.url(), "--store", "sqlite:/x.db", "--resource", "cli/r");
        assertEquals(2, both.exit());

        var audit = fence(Map.of("FENCE_CREDENTIAL", auditor, "FENCE_SERVER", t.url()), "audit", "--resource", "cli/r");
        assertEquals(0, audit.exit(), audit.err());
        assertTrue(audit.out().startsWith("TIME (UTC)"), audit.out());
        assertTrue(audit.out().contains("grant"), audit.out());
        var timeline = fence(
                Map.of("FENCE_CREDENTIAL", auditor, "FENCE_SERVER", t.url()),
                "audit",
                "timeline",
                "--resource",
                "cli/r");
        assertEquals(0, timeline.exit(), timeline.err());
        assertTrue(timeline.out().contains("cli/r -> agent-a (token "), timeline.out());
    }
}
