package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every malformed request, sent byte for byte over a real connection, gets a 4xx with an error body that
 * says what was wrong: never a 500, never a dropped connection.
 */
class MalformedRequestTest {
    private static final String JSON = "application/json";
    private static final String FORM = "application/x-www-form-urlencoded";

    @TempDir
    static Path tmp;

    static TestServer t;
    static String hook;
    static String agent;
    static String auditor;

    @BeforeAll
    static void start() {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("malformed.db"), "");
        hook = t.add("githost", Role.HOOK);
        agent = t.add("agent-a", Role.AGENT);
        auditor = t.add("reader", Role.AUDITOR);
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    /** A request, the status it must get and a phrase its message must contain. */
    record Case(String name, byte[] request, int status, String phrase) {}

    static Case post(String name, String path, String bearer, String type, String body, int status, String phrase) {
        return new Case(
                name,
                RawHttp.request("POST", path, bearer, type, body.getBytes(StandardCharsets.UTF_8)),
                status,
                phrase);
    }

    static Case get(String name, String pathAndQuery, String bearer, int status, String phrase) {
        return raw(
                name,
                "GET " + pathAndQuery + " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + bearer
                        + "\r\nConnection: close\r\n\r\n",
                status,
                phrase);
    }

    static Case raw(String name, String request, int status, String phrase) {
        return new Case(name, request.getBytes(StandardCharsets.ISO_8859_1), status, phrase);
    }

    static final String PRE = "/v1/hook/pre-receive";
    static final String ACQUIRE = "/v1/leases/acquire";
    static final String RENEW = "/v1/leases/renew";

    static List<Case> cases() {
        List<Case> c = new ArrayList<>();
        c.add(post(
                "nesting deeper than the parser allows",
                PRE,
                hook,
                JSON,
                "{\"stdin\":\"\",\"env\":" + "[".repeat(1200) + "]".repeat(1200) + "}",
                400,
                "not valid JSON"));
        c.add(post(
                "a number longer than the parser allows",
                ACQUIRE,
                agent,
                JSON,
                "{\"resource\":\"db/x\",\"holder\":\"agent-a\",\"ttl\":" + "1".repeat(1200) + "}",
                400,
                "not valid JSON"));
        c.add(post("cut short", PRE, hook, JSON, "{\"stdin\": ", 400, "not valid JSON"));
        c.add(post("not JSON at all", PRE, hook, JSON, "stdin=abc", 400, "not valid JSON"));
        c.add(post(
                "a second document after the first",
                PRE,
                hook,
                JSON,
                "{\"stdin\":\"\"} {\"stdin\":\"x\"}",
                400,
                "not valid JSON"));
        c.add(post("a field given twice", PRE, hook, JSON, "{\"stdin\":\"\",\"stdin\":\"x\"}", 400, "stdin"));
        c.add(post("an empty body", PRE, hook, JSON, "", 400, "JSON object"));
        c.add(post("null", PRE, hook, JSON, "null", 400, "JSON object"));
        c.add(post("an array", ACQUIRE, agent, JSON, "[1,2]", 400, "JSON object"));
        c.add(post("stdin a number", PRE, hook, JSON, "{\"stdin\":5}", 400, "'stdin'"));
        c.add(post("env values not strings", PRE, hook, JSON, "{\"stdin\":\"\",\"env\":{\"USER\":1}}", 400, "USER"));
        c.add(post(
                "ancestry facts not objects", PRE, hook, JSON, "{\"stdin\":\"\",\"ancestry\":[1]}", 400, "ancestry"));
        c.add(post(
                "a resource that is an object",
                ACQUIRE,
                agent,
                JSON,
                "{\"resource\":{\"x\":1},\"holder\":\"agent-a\"}",
                400,
                "'resource'"));
        c.add(post(
                "a token that is a fraction",
                RENEW,
                agent,
                JSON,
                "{\"resource\":\"db/x\",\"holder\":\"agent-a\",\"token\":1.5}",
                400,
                "token"));
        c.add(post(
                "a token past a long",
                RENEW,
                agent,
                JSON,
                "{\"resource\":\"db/x\",\"holder\":\"agent-a\",\"token\":99999999999999999999999}",
                400,
                "token"));
        c.add(post("a missing holder", ACQUIRE, agent, JSON, "{\"resource\":\"db/x\"}", 400, "holder"));
        c.add(new Case(
                "a body that is not UTF-8",
                RawHttp.request("POST", PRE, hook, JSON, new byte[] {
                    '{', '"', 's', 't', 'd', 'i', 'n', '"', ':', '"', (byte) 0xC3, '(', '"', '}'
                }),
                400,
                "UTF-8"));
        c.add(post("a form escape that is not hex", PRE, hook, FORM, "stdin=%ZZ", 400, "malformed form body"));
        c.add(post("a form value that is not UTF-8", PRE, hook, FORM, "stdin=%C3%28", 400, "UTF-8"));
        c.add(post("a form field given twice", PRE, hook, FORM, "stdin=a&stdin=b", 400, "'stdin'"));
        c.add(post("a content type that is neither", PRE, hook, "text/xml", "<push/>", 415, "application/json"));
        c.add(post(
                "a hook body in a charset other than UTF-8",
                PRE,
                hook,
                "application/x-www-form-urlencoded; charset=windows-1252",
                "stdin=",
                415,
                "UTF-8"));
        c.add(post(
                "a charset other than UTF-8",
                ACQUIRE,
                agent,
                "application/json; charset=iso-8859-1",
                "{\"resource\":\"db/x\",\"holder\":\"agent-a\",\"ttl\":\"1m\"}",
                415,
                "UTF-8"));
        c.add(raw(
                "two Authorization headers",
                "POST " + ACQUIRE + " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + agent
                        + "\r\nAuthorization: Bearer someone:else\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 2\r\n\r\n{}",
                400,
                "more than one Authorization header"));
        c.add(raw(
                "a Content-Length that is not a number",
                "POST " + PRE + " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + hook
                        + "\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}",
                400,
                "Content-Length"));
        c.add(raw(
                "a negative Content-Length",
                "POST " + PRE + " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + hook
                        + "\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n{}",
                400,
                "Content-Length"));
        c.add(raw(
                "a chunk size that is not hex",
                "POST " + PRE + " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + hook
                        + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
                400,
                "chunked"));
        c.add(raw(
                "headers larger than the limit",
                "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + "b".repeat(9000) + "\r\n\r\n",
                431,
                "malformed"));
        c.add(raw("a request line that is not HTTP", "HELLO THERE\r\n\r\n", 400, "malformed"));
        c.add(raw(
                "a header line without a colon",
                "GET /healthz HTTP/1.1\r\nHost: a\r\nBogus\r\n\r\n",
                400,
                "malformed"));
        c.add(raw(
                "a query escape that is not hex",
                "GET /v1/audit?limit=%ZZ HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + auditor
                        + "\r\nConnection: close\r\n\r\n",
                400,
                "malformed query"));
        c.add(get("an unknown event type", "/v1/audit?type=push", auditor, 400, "unknown event type"));
        c.add(get("a ref that is not one", "/v1/audit?ref=a..b", auditor, 400, "a..b"));
        c.add(get("a since that is neither", "/v1/audit?since=yesterday", auditor, 400, "since"));
        c.add(get("an until that is neither", "/v1/audit?until=tomorrow", auditor, 400, "until must be"));
        c.add(get(
                "a since past what a store compares",
                "/v1/audit?since=%2B1000000000-01-01T00:00:00Z",
                auditor,
                400,
                "between the years 0 and 9999"));
        c.add(get("a limit below zero", "/v1/audit?limit=-1", auditor, 400, "limit"));
        c.add(get("a status naming no resource", "/v1/leases/status", auditor, 400, "name the resource"));
        c.add(get("grants naming no holder", "/v1/leases/grants", auditor, 400, "'holder'"));
        c.add(post(
                "a ttl without a unit, as a form",
                ACQUIRE,
                agent,
                FORM,
                "resource=db/x&holder=agent-a&ttl=5",
                400,
                "ttl"));
        c.add(raw(
                "a query value that is not UTF-8",
                "GET /v1/leases/status?resource=%E9 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + auditor
                        + "\r\nConnection: close\r\n\r\n",
                400,
                "UTF-8"));
        return c;
    }

    @Test
    void everyMalformedRequestGetsAClientErrorThatSaysWhatWasWrong() {
        URI server = URI.create(t.url());
        List<String> failures = new ArrayList<>();
        for (Case c : cases()) {
            RawHttp.Answer a = RawHttp.send(server, c.request(), 5000);
            String why = check(c, a);
            if (why != null) {
                failures.add(c.name() + ": " + why + "\n  " + a.head().replace("\r\n", "\n  ") + "\n  " + a.body());
            }
        }
        assertTrue(failures.isEmpty(), failures.size() + " of " + cases().size() + ":\n" + String.join("\n", failures));
        String log = String.join("\n", t.log);
        assertTrue(!log.contains("internal error"), "client input is never an internal error:\n" + log);
    }

    private static String check(Case c, RawHttp.Answer a) {
        if (a.status() != c.status()) {
            return "status " + a.status() + ", wanted " + c.status();
        }
        JsonNode n;
        try {
            n = Json.read(a.body());
        } catch (Exception e) {
            return "the body is not the JSON error body";
        }
        if (n == null
                || !"error".equals(n.path("status").asText())
                || n.path("message").asText().isBlank()) {
            return "the body is not the JSON error body";
        }
        if (!n.path("message").asText().contains(c.phrase())) {
            return "the message does not mention '" + c.phrase() + "'";
        }
        return null;
    }
}
