package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.hook.HookConfig;
import dev.fence.hook.PreReceiveHook;
import dev.fence.server.client.FenceClient;
import dev.fence.server.client.RemoteHooks;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java hook in server mode keeps the shim's rule: only fence serve's verdict, for this request's own
 * nonce, accepts a push; any other answer with status 200 refuses it, whatever {@code on-store-down} says.
 */
class RemoteHooksReplyTest {
    private static final String LINE = "0".repeat(40) + " " + "6".repeat(40) + " refs/heads/main\n";
    private static final Map<String, String> PUSH = Map.of("REMOTE_USER", "alice");

    @TempDir
    static Path tmp;

    static TestServer t;
    static String hook;
    static HookConfig config;

    @BeforeAll
    static void start() throws Exception {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("remote.db"), "");
        hook = t.add("githost", Role.HOOK);
        Path conf = tmp.resolve("fence.conf");
        Files.writeString(conf, "on-store-down = accept\nrepo-id = app\n");
        config = HookConfig.load(null, conf, null);
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    static PreReceiveHook.Result push(String url) {
        RemoteHooks hooks = new RemoteHooks(
                FenceClient.create(url, Map.of("FENCE_CREDENTIAL", hook), Duration.ofSeconds(2)), Clock.systemUTC());
        return hooks.preReceive(PUSH, tmp, new ByteArrayInputStream(LINE.getBytes(StandardCharsets.UTF_8)), config);
    }

    @Test
    void theRealServerStillDecides() {
        PreReceiveHook.Result r = push(t.url());
        assertEquals(0, r.exitCode(), String.join("\n", r.lines()));
    }

    @Test
    void anAnswerThatIsNotAFenceVerdictRefusesThePush() {
        Map<String, Function<FakeHttpServer.Received, byte[]>> replies = new LinkedHashMap<>();
        replies.put(
                "an accept without format or nonce",
                r -> FakeHttpServer.response(
                        200, "application/json", "{\"verdict\":\"accept\",\"exitCode\":0,\"lines\":[]}"));
        replies.put(
                "another request's nonce",
                r -> FakeHttpServer.response(
                        200,
                        "application/json",
                        "{\"format\":\"fence-verdict/1\",\"nonce\":\"0123456789abcdef0123\",\"verdict\":\"accept\","
                                + "\"exitCode\":0,\"lines\":[]}"));
        replies.put(
                "an exit code that is not the verdict's",
                r -> FakeHttpServer.response(
                        200,
                        "application/json",
                        "{\"format\":\"fence-verdict/1\",\"nonce\":\"" + r.nonce()
                                + "\",\"verdict\":\"reject\",\"exitCode\":0,\"lines\":[]}"));
        replies.put("a login page", r -> FakeHttpServer.response(200, "text/html", "<html>Sign in</html>"));
        replies.put("ok", r -> FakeHttpServer.response(200, "text/plain", "ok\n"));
        List<String> failures = new ArrayList<>();
        for (var reply : replies.entrySet()) {
            try (FakeHttpServer fake = FakeHttpServer.start(reply.getValue())) {
                PreReceiveHook.Result r;
                try {
                    r = push(fake.url());
                } catch (RuntimeException e) {
                    failures.add(reply.getKey() + ": threw " + e);
                    continue;
                }
                String lines = String.join("\n", r.lines());
                if (r.exitCode() != 1
                        || !lines.contains("reason=bad-server-reply")
                        || !lines.contains("not a fence verdict")) {
                    failures.add(reply.getKey() + ": exit " + r.exitCode() + "\n" + lines);
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n---\n", failures));
    }
}
