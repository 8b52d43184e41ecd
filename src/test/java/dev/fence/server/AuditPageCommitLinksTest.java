package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.json.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence serve --commit-url}: the live {@code /audit} page links a push's commits as the CLI's page does. */
class AuditPageCommitLinksTest {
    private static final String NEW = "4".repeat(40);

    @TempDir
    Path tmp;

    private static String page(TestServer t, String bearer, String query) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(t.url() + "/audit" + query))
                                .header("Authorization", "Bearer " + bearer)
                                .timeout(Duration.ofSeconds(20))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    /** A tokenless creation of main in repo {@code app}: a bump event carrying the new commit. */
    private static void push(TestServer t, String hook) {
        var r = t.post(
                "/v1/hook/pre-receive",
                hook,
                "application/json",
                Json.write(Map.of(
                        "stdin",
                        "0".repeat(40) + " " + NEW + " refs/heads/main\n",
                        "env",
                        Map.of("REMOTE_USER", "alice", "FENCE_REPO_ID", "app my"))));
        assertEquals(200, r.status(), r.body());
    }

    @Test
    void withATemplateThePageLinksCommitsAndWithoutOneItDoesNot() throws Exception {
        String template = "https://git.example.com/{repo}/-/commit/{sha}";
        try (TestServer linked = TestServer.start(
                tmp.resolve("linked"), "sqlite:" + tmp.resolve("a.db"), "", s -> s.withCommitUrl(template))) {
            push(linked, linked.add("githost", Role.HOOK));
            String html = page(linked, linked.add("reader", Role.AUDITOR), "?resource=git:app%20my:refs/heads/main");
            assertTrue(
                    html.contains("href=\"https://git.example.com/app+my/-/commit/" + NEW + "\""),
                    "the commit is linked, the repo id encoded:\n" + html);
        }
        try (TestServer plain = TestServer.start(tmp.resolve("plain"), "sqlite:" + tmp.resolve("b.db"), "")) {
            push(plain, plain.add("githost", Role.HOOK));
            String html = page(plain, plain.add("reader", Role.AUDITOR), "?resource=git:app%20my:refs/heads/main");
            assertTrue(html.contains(NEW.substring(0, 7)), html);
            assertFalse(html.contains("data-commit="), "no template, no links");
        }
    }
}
