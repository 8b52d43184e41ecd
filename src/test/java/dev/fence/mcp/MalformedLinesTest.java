package dev.fence.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.LeaseStore;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK's stdio server, as {@link FenceMcpServer#serve} sets it up, fed raw lines: a line that is not a
 * JSON-RPC message is answered with a JSON-RPC error, the next line is served as if it had not been
 * there, and the server returns when its input ends, whatever came before.
 */
class MalformedLinesTest {
    static final String INIT =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                    + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

    @TempDir
    Path tmp;

    LeaseStore store;
    Lines client;
    StringWriter stderr = new StringWriter();
    Thread server;
    volatile Throwable failed;

    @BeforeEach
    void setUp() throws Exception {
        FakeClock clock = new FakeClock(Instant.parse("2026-12-01T14:26:10Z"));
        store = Stores.open(
                "sqlite:" + tmp.resolve("store.db"), StoreOptions.defaults().withCallerClock());
        FenceTools tools = TestTools.agentA(store, clock, tmp, null);
        client = new Lines();
        server = new Thread(() -> {
            try {
                FenceMcpServer.serve(
                        tools,
                        "the rule",
                        "test",
                        client.in,
                        new PrintWriter(client.out, true),
                        new PrintWriter(stderr, true),
                        4096);
            } catch (Throwable t) {
                failed = t;
            }
        });
        server.setDaemon(true);
        server.start();
        client.send(INIT);
        assertEquals(1, client.next().get("id").asInt());
        client.send(INITIALIZED);
    }

    @AfterEach
    void stop() throws Exception {
        client.end();
        server.join(10_000);
        store.close();
    }

    @Test
    void aLineThatIsNotJsonIsAParseErrorAndTheNextLineIsServed() throws Exception {
        client.send("{not json");
        JsonNode error = client.next();
        assertError(error, -32700);
        client.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
        JsonNode tools = client.next();
        assertEquals(2, tools.get("id").asInt(), tools.toString());
        assertTrue(tools.get("result").get("tools").size() > 0, tools.toString());
        assertTrue(stderr.toString().contains("-32700"), stderr.toString());
    }

    @Test
    void aBatchIsAnInvalidRequestAndTheNextLineIsServed() throws Exception {
        client.send("[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}]");
        JsonNode error = client.next();
        assertError(error, -32600);
        assertTrue(error.get("error").get("message").asText().contains("batch"), error.toString());
        client.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"lease_status\","
                + "\"arguments\":{\"resource\":\"shared/plan\"}}}");
        JsonNode status = client.next();
        assertEquals(3, status.get("id").asInt(), status.toString());
        assertFalse(status.get("result").get("isError").asBoolean(), status.toString());
    }

    @Test
    void jsonThatIsNotAMessageIsAnInvalidRequestNamingItsIdWhenItHasOne() throws Exception {
        for (String line : new String[] {"null", "42", "\"text\"", "true", "{}", "{\"jsonrpc\":\"2.0\"}"}) {
            client.send(line);
            assertError(client.next(), -32600);
        }
        client.send("{\"jsonrpc\":\"2.0\",\"id\":7}");
        JsonNode seven = client.next();
        assertEquals(-32600, seven.get("error").get("code").asInt(), seven.toString());
        assertEquals(7, seven.get("id").asInt(), seven.toString());
        client.send("{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":5} trailing");
        assertError(client.next(), -32700);
        client.send("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}");
        assertEquals(8, client.next().get("id").asInt());
    }

    @Test
    void blankLinesAreSkippedAndAnOverlongLineIsRefusedWithoutLosingTheNext() throws Exception {
        client.send("");
        client.send("   \t");
        client.send("{\"jsonrpc\":\"2.0\",\"id\":\"" + "x".repeat(5000) + "\",\"method\":\"ping\"}");
        JsonNode big = client.next();
        assertError(big, -32600);
        assertTrue(big.get("error").get("message").asText().contains("4096"), big.toString());
        client.send("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
        assertEquals(9, client.next().get("id").asInt());
    }

    @Test
    void messagesTheSdkTakesButCannotUseDoNotStopTheServer() throws Exception {
        client.send("{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}"); // a response to nothing
        client.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/nothing\"}");
        client.send("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":5}");
        client.send("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"no/such/method\"}");
        JsonNode ten = client.next();
        JsonNode eleven = client.next();
        assertNotNull(ten.get("error"), ten.toString());
        assertNotNull(eleven.get("error"), eleven.toString());
        client.send("{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\"}");
        assertEquals(12, client.next().get("id").asInt());
    }

    @Test
    void theServerReturnsWhenItsInputEndsAfterABadLine() throws Exception {
        client.send("{not json");
        client.send("[1]");
        assertError(client.next(), -32700);
        assertError(client.next(), -32600);
        client.end();
        server.join(10_000);
        assertFalse(server.isAlive(), "serve returned when its input ended");
        assertNull(failed);
    }

    @Test
    void aLastLineWithoutANewlineIsCheckedLikeAnyOther() throws Exception {
        client.sendRaw("{not json");
        client.end();
        assertError(client.next(), -32700);
        server.join(10_000);
        assertFalse(server.isAlive());
    }

    private static void assertError(JsonNode m, int code) {
        assertEquals("2.0", m.get("jsonrpc").asText(), m.toString());
        assertTrue(m.has("id") && m.get("id").isNull(), "id null: " + m);
        assertEquals(code, m.get("error").get("code").asInt(), m.toString());
        assertFalse(m.get("error").get("message").asText().isBlank(), m.toString());
    }

    /** The client's end: lines into the server's input, and its output as lines. */
    static final class Lines {
        final BlockingQueue<byte[]> input = new LinkedBlockingQueue<>();
        final BlockingQueue<String> output = new LinkedBlockingQueue<>();
        final InputStream in = new InputStream() {
            byte[] current = new byte[0];
            int at;
            boolean ended;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public synchronized int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                while (at == current.length) {
                    if (ended) {
                        return -1;
                    }
                    try {
                        current = input.take();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException();
                    }
                    at = 0;
                    if (current.length == 0) {
                        ended = true;
                    }
                }
                int n = Math.min(len, current.length - at);
                System.arraycopy(current, at, b, off, n);
                at += n;
                return n;
            }
        };
        final Writer out = new Writer() {
            final StringBuilder line = new StringBuilder();

            @Override
            public synchronized void write(char[] cbuf, int off, int len) {
                for (int i = off; i < off + len; i++) {
                    if (cbuf[i] == '\n') {
                        output.add(line.toString());
                        line.setLength(0);
                    } else {
                        line.append(cbuf[i]);
                    }
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };

        void send(String line) {
            sendRaw(line + "\n");
        }

        void sendRaw(String text) {
            input.add(text.getBytes(StandardCharsets.UTF_8));
        }

        void end() {
            input.add(new byte[0]);
        }

        JsonNode next() throws Exception {
            String line = output.poll(10, TimeUnit.SECONDS);
            assertNotNull(line, "the server answered");
            return Json.read(line);
        }
    }
}
