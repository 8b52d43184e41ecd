package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.LegacyGrants;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /audit}: who may see the incident page, how browsers authenticate, and what it shows. */
class AuditPageTest {
    @TempDir
    static Path tmp;

    static TestServer t;
    static String agent;
    static String auditor;
    static String admin;
    static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    @BeforeAll
    static void start() {
        // A name no new grant may carry (Names.requireHolder), as a store written by an older fence holds it.
        LegacyGrants.grant("sqlite:" + tmp.resolve("audit.db"), "files/config", "<script>alert(1)</script>");
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("audit.db"), "");
        agent = t.add("agent-a", Role.AGENT, "agent-a");
        auditor = t.add("reader", Role.AUDITOR);
        admin = t.add("ops", Role.ADMIN);
        for (String[] lease : new String[][] {{"db/migrations", "agent-a"}}) {
            var r = t.post(
                    "/v1/leases/acquire",
                    admin,
                    "application/json",
                    "{\"resource\":\"" + lease[0] + "\",\"holder\":\"" + lease[1] + "\",\"ttl\":\"30s\"}");
            assertEquals(200, r.status(), r.body());
        }
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    static HttpResponse<String> get(String path, String authorization) throws Exception {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(t.url() + path)).timeout(Duration.ofSeconds(20));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** HTTP Basic as a browser sends it: the credential's name as user, its secret as password. */
    static String basic(String credential) {
        return "Basic " + Base64.getEncoder().encodeToString(credential.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void withoutACredentialTheBrowserIsAskedForBasic() throws Exception {
        var r = get("/audit", null);
        assertEquals(401, r.statusCode());
        assertEquals(
                "Basic realm=\"fence\", charset=\"UTF-8\"",
                r.headers().firstValue("WWW-Authenticate").orElse(""));
        assertFalse(r.body().contains("data-lane"), "nothing of the ledger");
        var api = get("/v1/audit", null);
        assertEquals(401, api.statusCode());
        assertEquals(
                "Bearer realm=\"fence\"",
                api.headers().firstValue("WWW-Authenticate").orElse(""),
                "API unchanged");
    }

    @Test
    void agentsHooksAndWrongSecretsAreRefused() throws Exception {
        assertEquals(403, get("/audit", basic(agent)).statusCode());
        assertEquals(403, get("/audit", "Bearer " + agent).statusCode());
        String hook = t.add("githost", Role.HOOK);
        assertEquals(403, get("/audit", basic(hook)).statusCode());
        String wrong = auditor.substring(0, auditor.indexOf(':') + 1) + "not-the-secret";
        assertEquals(401, get("/audit", basic(wrong)).statusCode());
        assertEquals(401, get("/audit", "Basic !!!not-base64").statusCode());
        assertEquals(401, get("/audit", "Digest username=\"reader\"").statusCode());
    }

    /**
     * A browser that signed in to {@code /audit} sends the Basic credential to every path of the server by
     * itself, also when another site's page makes it post a form there (cross-site request forgery): an
     * admin's browser would acquire or release leases for whoever made the page. Basic is for the page
     * alone; the API takes only the bearer header, which no other site can make a browser send.
     */
    @Test
    void basicIsTakenOnlyByThePageSoAnotherSiteCannotUseASignedInBrowserOnTheApi() throws Exception {
        assertEquals(200, get("/audit", basic(admin)).statusCode());
        var forged = HTTP.send(
                HttpRequest.newBuilder(URI.create(t.url() + "/v1/leases/acquire"))
                        .timeout(Duration.ofSeconds(20))
                        .header("Authorization", basic(admin))
                        // What a plain HTML form on any site posts.
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("resource=db/forged&holder=agent-a&ttl=30s"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(401, forged.statusCode(), forged.body());
        assertEquals(401, get("/v1/audit", basic(auditor)).statusCode());
        assertEquals(
                401, get("/v1/leases/status?resource=db/forged", basic(admin)).statusCode());
        var status = t.get("/v1/leases/status?resource=db/forged", admin, null);
        assertEquals(200, status.status(), status.body());
        assertFalse(status.body().contains("agent-a"), "nothing was acquired: " + status.body());
    }

    @Test
    void auditorsAndAdminsGetThePageWithAPickerOfActiveResources() throws Exception {
        for (String auth : new String[] {basic(auditor), "Bearer " + auditor, basic(admin)}) {
            var r = get("/audit", auth);
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
            String csp = r.headers().firstValue("Content-Security-Policy").orElse("");
            assertTrue(csp.startsWith("default-src 'none'") && csp.contains("frame-ancestors 'none'"), csp);
            assertTrue(r.body().contains("<option value=\"files/config\""), r.body());
            assertTrue(r.body().contains("<option value=\"db/migrations\" selected>"), "newest activity first");
        }
    }

    @Test
    void thePickedResourceAndWindowAreQueryParameters() throws Exception {
        var r = get("/audit?resource=db%2Fmigrations&since=1h", basic(auditor));
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("data-resource=\"db/migrations\""));
        assertTrue(r.body().contains("data-lane=\"agent-a\""));
        assertFalse(r.body().contains("data-resource=\"files/config\""));
        assertTrue(r.body().contains("name=\"since\" placeholder=\"24h or 2026-12-01T14:00:00Z\" value=\"1h\""));

        var evil = get("/audit?resource=files%2Fconfig", basic(auditor));
        assertFalse(evil.body().contains("<script>alert"), "a holder's name is text");
        assertTrue(evil.body().contains("data-lane=\"&lt;script&gt;alert(1)&lt;/script&gt;\""));

        String future = URLEncoder.encode("2000-01-01T00:00:00Z", StandardCharsets.UTF_8);
        var empty = get("/audit?resource=db%2Fmigrations&until=" + future, basic(auditor));
        assertEquals(400, empty.statusCode(), "until before the default since");
        assertEquals(400, get("/audit?since=yesterday", basic(auditor)).statusCode());
    }
}
