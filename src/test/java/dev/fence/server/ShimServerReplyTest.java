package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.ProcessTest;
import dev.fence.testing.Stdin;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The curl shim against servers that are not fence serve, or that never answer: nothing but a well-formed
 * verdict of fence serve, carrying the shim's own nonce, lets a push through, and every way of asking
 * keeps the shim's budget.
 */
@ProcessTest
class ShimServerReplyTest {
    private static final String LINE = "0".repeat(40) + " " + "6".repeat(40) + " refs/heads/main\n";

    @TempDir
    static Path tmp;

    static TestServer t;
    static String hook;
    static Path noCurl;

    @BeforeAll
    static void start() throws IOException {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("reply.db"), "");
        hook = t.add("githost", Role.HOOK);
        // A PATH with git and no curl: the shim then has only bash's /dev/tcp.
        noCurl = Files.createDirectories(tmp.resolve("no-curl"));
        Files.createSymbolicLink(noCurl.resolve("git"), Path.of("/usr/bin/git"));
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    record Run(int exit, String err, long millis) {}

    /** The two ways the shim asks a server on this host: bash's /dev/tcp (no curl on PATH), and curl. */
    enum Transport {
        TCP,
        CURL
    }

    /** Runs the shim; kills it (and what it started) when it has not finished within {@code limitMs}. */
    static Run shim(Transport via, Map<String, String> extra, long limitMs) throws Exception {
        Map<String, String> env = new HashMap<>(Map.of(
                "PATH",
                via == Transport.TCP ? noCurl.toString() : "/usr/bin:/bin",
                "REMOTE_USER",
                "alice",
                "HOME",
                tmp.toString(),
                "FENCE_CREDENTIAL",
                hook));
        if (via == Transport.CURL) {
            env.put("FENCE_SHIM_TRANSPORT", "curl");
        }
        env.putAll(extra);
        ProcessBuilder pb = new ProcessBuilder(
                        "/bin/bash",
                        ShimFiles.install(tmp.resolve("shim"), "app", ShimFiles.settingsOf(env))
                                .toString())
                .directory(tmp.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        Stdin.feed(p, LINE);
        boolean done = p.waitFor(limitMs, TimeUnit.MILLISECONDS);
        long millis = (System.nanoTime() - start) / 1_000_000;
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
            return new Run(-1, "(still running after " + limitMs + " ms; killed) " + err.getNow(""), millis);
        }
        return new Run(p.exitValue(), err.get(5, TimeUnit.SECONDS), millis);
    }

    private static String readAll(InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A verdict's first line for the request's own nonce. */
    static String verdict(FakeHttpServer.Received r, int exit) {
        return "fence-verdict/1 nonce=" + r.nonce() + " exit=" + exit + "\n";
    }

    @Test
    void aRealServersVerdictStillDecidesOnBothPaths() throws Exception {
        for (Transport via : Transport.values()) {
            Run r = shim(via, Map.of("FENCE_SERVER", t.url()), 15_000);
            assertEquals(0, r.exit(), via + ": " + r.err());
            assertEquals("", r.err(), via.toString());
        }
    }

    @Test
    void aReplyThatIsNotAFenceVerdictIsRefused() throws Exception {
        Map<String, Function<FakeHttpServer.Received, byte[]>> replies = new LinkedHashMap<>();
        replies.put("200 ok", r -> FakeHttpServer.response(200, "text/plain", "ok\n"));
        replies.put("200 accept (no nonce)", r -> FakeHttpServer.response(200, "text/plain", "accept\n"));
        replies.put(
                "200 login page",
                r -> FakeHttpServer.response(
                        200, "text/html", "<html><body><form>Sign in to the network</form></body></html>\n"));
        replies.put("200 empty", r -> FakeHttpServer.response(200, "text/plain", ""));
        replies.put(
                "200 another nonce",
                r -> FakeHttpServer.response(200, "text/plain", "fence-verdict/1 nonce=0123456789abcdef exit=0\n"));
        replies.put(
                "200 no version", r -> FakeHttpServer.response(200, "text/plain", "nonce=" + r.nonce() + " exit=0\n"));
        replies.put(
                "200 first line cut short",
                r -> FakeHttpServer.response(200, "text/plain", "fence-verdict/1 nonce=" + r.nonce() + " exi"));
        replies.put("200 truncated body", r -> {
            String body = verdict(r, 0) + "warning: something\n";
            String head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + (body.length() + 200)
                    + "\r\nConnection: close\r\n\r\n";
            return (head + body).getBytes(StandardCharsets.UTF_8);
        });
        replies.put(
                "302 captive portal",
                r -> ("HTTP/1.1 302 Found\r\nLocation: http://login.example/\r\nContent-Length: 0\r\n"
                                + "Connection: close\r\n\r\n")
                        .getBytes(StandardCharsets.UTF_8));
        replies.put(
                "404 html", r -> FakeHttpServer.response(404, "text/html", "<html><body>Not Found</body></html>\n"));
        List<String> failures = new ArrayList<>();
        for (var reply : replies.entrySet()) {
            try (FakeHttpServer fake = FakeHttpServer.start(reply.getValue())) {
                for (Transport via : Transport.values()) {
                    Run r = shim(via, Map.of("FENCE_SERVER", fake.url()), 15_000);
                    if (r.exit() != 1 || !r.err().contains("reason=bad-server-reply")) {
                        failures.add(reply.getKey() + " via " + via + ": exit " + r.exit() + "\n" + r.err());
                        continue;
                    }
                    assertTrue(
                            r.err()
                                    .startsWith("REJECTED resource=- ref=- token=0 current=0 reason=bad-server-reply\n"
                                            + "fence: "),
                            r.err());
                    assertTrue(r.err().contains("not a fence verdict"), r.err());
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n---\n", failures));
    }

    @Test
    void aPushCarryingATokenIsNeverAcceptedByAServerThatIsNotFence() throws Exception {
        try (FakeHttpServer fake = FakeHttpServer.start(r -> FakeHttpServer.response(200, "text/plain", "accept\n"))) {
            for (Transport via : Transport.values()) {
                Run r = shim(
                        via,
                        Map.of(
                                "FENCE_SERVER",
                                fake.url(),
                                "GIT_PUSH_OPTION_COUNT",
                                "2",
                                "GIT_PUSH_OPTION_0",
                                "fence=12",
                                "GIT_PUSH_OPTION_1",
                                "fence-proof=unproven"),
                        15_000);
                assertEquals(1, r.exit(), via + ": " + r.err());
                assertTrue(r.err().contains("reason=bad-server-reply"), via + ": " + r.err());
            }
        }
    }

    @Test
    void aWellFormedVerdictWithTheShimsNonceDecides() throws Exception {
        try (FakeHttpServer accept = FakeHttpServer.start(
                        r -> FakeHttpServer.response(200, "text/plain", verdict(r, 0) + "warning: from the server\n"));
                FakeHttpServer reject = FakeHttpServer.start(r -> FakeHttpServer.response(
                        200, "text/plain", verdict(r, 1) + "FENCED resource=x ref=- token=1 current=2\n"))) {
            for (Transport via : Transport.values()) {
                Run yes = shim(via, Map.of("FENCE_SERVER", accept.url()), 15_000);
                assertEquals(0, yes.exit(), via + ": " + yes.err());
                assertEquals("warning: from the server\n", yes.err(), via.toString());
                Run no = shim(via, Map.of("FENCE_SERVER", reject.url()), 15_000);
                assertEquals(1, no.exit(), via + ": " + no.err());
                assertEquals("FENCED resource=x ref=- token=1 current=2\n", no.err(), via.toString());
            }
        }
    }

    /**
     * A listening socket whose accept queue is full: the kernel no longer completes new handshakes, so a
     * connect waits (for minutes, as TCP retries its SYN) instead of failing.
     */
    static final class FullBacklog implements AutoCloseable {
        final ServerSocket server;
        final List<Socket> fillers = new ArrayList<>();

        FullBacklog() throws IOException {
            server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            for (int i = 0; i < 64; i++) {
                Socket s = new Socket();
                try {
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 300);
                    fillers.add(s);
                } catch (SocketTimeoutException full) {
                    s.close();
                    return;
                }
            }
            throw new IllegalStateException("the accept queue never filled");
        }

        String url() {
            return "http://127.0.0.1:" + server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            for (Socket s : fillers) {
                s.close();
            }
            server.close();
        }
    }

    /**
     * Megabytes of answer, with or without a length, with or without a verdict ahead of them: refused as no
     * verdict within the budget on every path (bash's suffix patterns on such a string once took minutes).
     */
    @Test
    void anOversizedAnswerIsRefusedWithinTheBudgetOnEveryPath() throws Exception {
        String filler = "A".repeat(2 << 20);
        Map<String, Function<FakeHttpServer.Received, byte[]>> replies = new LinkedHashMap<>();
        replies.put("a page with no line end", r -> FakeHttpServer.response(200, "text/html", "<html>" + filler));
        replies.put("a verdict, then filler", r -> FakeHttpServer.response(200, "text/plain", verdict(r, 0) + filler));
        replies.put("a verdict, then filler of no declared length", r -> ("HTTP/1.0 200 OK\r\nContent-Type: text/plain"
                        + "\r\nConnection: close\r\n\r\n" + verdict(r, 0) + filler)
                .getBytes(StandardCharsets.UTF_8));
        List<String> failures = new ArrayList<>();
        for (var reply : replies.entrySet()) {
            try (FakeHttpServer fake = FakeHttpServer.start(reply.getValue())) {
                for (Transport via : Transport.values()) {
                    Run r = shim(via, Map.of("FENCE_SERVER", fake.url(), "FENCE_SHIM_BUDGET", "2"), 15_000);
                    if (r.exit() != 1 || !r.err().contains("reason=bad-server-reply") || r.millis() > 3_000) {
                        failures.add(reply.getKey() + " via " + via + ": exit " + r.exit() + " after " + r.millis()
                                + " ms\n"
                                + r.err().substring(0, Math.min(400, r.err().length())));
                    }
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n---\n", failures));
    }

    @Test
    void aServerWhoseAcceptQueueIsFullCostsTheBudgetOnEveryPath() throws Exception {
        try (FullBacklog full = new FullBacklog()) {
            for (Transport via : Transport.values()) {
                Run r = shim(via, Map.of("FENCE_SERVER", full.url(), "FENCE_SHIM_BUDGET", "1.5"), 10_000);
                assertEquals(1, r.exit(), via + ": " + r.err());
                assertTrue(r.millis() < 2500, via + " took " + r.millis() + " ms");
                assertTrue(r.err().contains("reason=store-down"), via + ": " + r.err());
                assertTrue(r.err().contains("the fence server is unavailable"), via + ": " + r.err());
            }
        }
    }

    @Test
    void aServerThatAcceptsAndNeverAnswersCostsTheBudgetOnEveryPath() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<Socket> accepted = new ArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept());
                    }
                } catch (IOException closed) {
                    // done
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            for (Transport via : Transport.values()) {
                Run r = shim(
                        via,
                        Map.of("FENCE_SERVER", "http://127.0.0.1:" + silent.getLocalPort(), "FENCE_SHIM_BUDGET", "1.5"),
                        10_000);
                assertEquals(1, r.exit(), via + ": " + r.err());
                assertTrue(r.millis() < 2500, via + " took " + r.millis() + " ms");
                assertTrue(r.err().contains("the fence server is unavailable"), via + ": " + r.err());
            }
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
