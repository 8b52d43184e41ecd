package dev.fence.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * {@link FenceTools} as an MCP server on stdio (the SDK's transport: one JSON-RPC message per line), with
 * the ownership rule as a prompt and the holder's live lease status as a resource. Runs until its input
 * ends.
 */
public final class FenceMcpServer {
    /** The prompt's name. */
    public static final String RULE_PROMPT = "fence-ownership-rule";

    /** The resource that reads the holder's live leases. */
    public static final String LEASES_URI = "fence://leases";

    /** The longest line taken as a message, in characters (the SDK's own limit). */
    static final int MAX_LINE = 16 * 1024 * 1024;

    private FenceMcpServer() {}

    /**
     * Serves {@code tools} on {@code in} and {@code out} until {@code in} ends (the client closed it),
     * whatever came before. Nothing else may write to {@code out}. A line that is not a JSON-RPC message
     * (not JSON, a batch, too long) is answered with a JSON-RPC error and noted on {@code err}, and the
     * next line is served.
     *
     * @param rule the ownership rule, served as the prompt {@link #RULE_PROMPT}
     * @param version the server's version, as the client sees it
     * @param err where each refused line is noted (never a line's content)
     */
    public static void serve(
            FenceTools tools, String rule, String version, InputStream in, PrintWriter out, PrintWriter err)
            throws InterruptedException {
        serve(tools, rule, version, in, out, err, MAX_LINE);
    }

    /** {@link #serve}, taking lines of up to {@code maxLine} characters. */
    static void serve(
            FenceTools tools,
            String rule,
            String version,
            InputStream in,
            PrintWriter out,
            PrintWriter err,
            int maxLine)
            throws InterruptedException {
        McpJsonMapper mapper = McpJsonDefaults.getMapper();
        CountDownLatch ended = new CountDownLatch(1);
        Lines lines = new Lines(out);
        var transport = new StdioServerTransportProvider(
                mapper, new Messages(in, mapper, lines, err, maxLine, ended), lines, maxLine);
        List<McpServerFeatures.SyncToolSpecification> specs = new ArrayList<>();
        for (FenceTools.Tool t : tools.tools()) {
            McpSchema.Tool tool = McpSchema.Tool.builder()
                    .name(t.name())
                    .description(t.description())
                    .inputSchema(t.inputSchema())
                    .build();
            specs.add(McpServerFeatures.SyncToolSpecification.builder()
                    .tool(tool)
                    .callHandler((exchange, request) -> result(tools.call(request.name(), request.arguments())))
                    .build());
        }
        var prompt = new McpServerFeatures.SyncPromptSpecification(
                new McpSchema.Prompt(
                        RULE_PROMPT,
                        "The rule for leases and FENCED tool results; put it in the system prompt.",
                        List.of()),
                (exchange, request) -> new McpSchema.GetPromptResult(
                        "How an agent must treat leases and FENCED results",
                        List.of(new McpSchema.PromptMessage(McpSchema.Role.USER, new McpSchema.TextContent(rule)))));
        var leases = new McpServerFeatures.SyncResourceSpecification(
                McpSchema.Resource.builder()
                        .uri(LEASES_URI)
                        .name("leases")
                        .title("Live leases of " + tools.holder())
                        .description("What " + tools.holder() + " holds right now, as dated sentences read from the"
                                + " lease store. Re-read it after a compaction instead of trusting a summary.")
                        .mimeType("text/plain")
                        .build(),
                (exchange, request) -> new McpSchema.ReadResourceResult(List.of(new McpSchema.TextResourceContents(
                        LEASES_URI, "text/plain", String.join("\n", tools.statusLines())))));
        McpSyncServer server = McpServer.sync(transport)
                .serverInfo("fence", version)
                .instructions("Fenced tools for shared git branches and resources. Hold a lease (lease_acquire)"
                        + " before changing a resource; a FENCED result means the lease is gone: stop, re-read"
                        + " with read_state and re-plan. The prompt " + RULE_PROMPT + " has the whole rule.")
                .capabilities(McpSchema.ServerCapabilities.builder()
                        .tools(false)
                        .prompts(false)
                        .resources(false, false)
                        .build())
                // The tools check their own arguments, so that every refusal names the argument in fence's words
                // and comes back as the same structured error.
                .validateToolInputs(false)
                .tools(specs)
                .prompts(prompt)
                .resources(leases)
                .build();
        try {
            ended.await();
        } finally {
            server.closeGracefully();
        }
    }

    static McpSchema.CallToolResult result(ToolResult r) {
        return McpSchema.CallToolResult.builder()
                .addTextContent(r.text())
                .isError(r.error())
                .structuredContent(r.structured())
                .build();
    }

    /**
     * The client's lines as the SDK's transport reads them, each one checked first. The transport stops
     * reading for good at the first line it cannot deserialise (and then never sees the input end), so a
     * line it would not take never reaches it: it is answered here with a JSON-RPC error and the next line
     * is read. The check is the transport's own parse (the same Jackson mapper, then {@link
     * McpSchema#deserializeJsonRpcMessage}), so a line passed on is one the transport takes. Lines end as
     * the transport ends them (LF, CR or CRLF); blank lines are skipped. Counts {@code ended} down when the
     * input ends (EOF or a read error).
     */
    static final class Messages extends InputStream {
        /** JSON-RPC 2.0's codes. */
        static final int PARSE_ERROR = -32700;

        static final int INVALID_REQUEST = -32600;

        private final BufferedReader in;
        private final McpJsonMapper mapper;
        private final Lines out;
        private final PrintWriter err;
        private final int maxLine;
        private final CountDownLatch ended;
        private byte[] current = new byte[0];
        private int at;
        private boolean eof;
        private long number;

        Messages(InputStream in, McpJsonMapper mapper, Lines out, PrintWriter err, int maxLine, CountDownLatch ended) {
            // UTF-8, as the transport decodes it; a malformed sequence becomes U+FFFD for both.
            this.in = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            this.mapper = mapper;
            this.out = out;
            this.err = err;
            this.maxLine = maxLine;
            this.ended = ended;
        }

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
                if (eof) {
                    return -1;
                }
                next();
            }
            int n = Math.min(len, current.length - at);
            System.arraycopy(current, at, b, off, n);
            at += n;
            return n;
        }

        /** What is left of the line in hand: the transport's decoder stops at the end of a line. */
        @Override
        public synchronized int available() {
            return current.length - at;
        }

        @Override
        public void close() throws IOException {
            ended.countDown();
            in.close();
        }

        /** Reads lines until one the transport takes, or the end. */
        private void next() throws IOException {
            StringBuilder line = new StringBuilder();
            boolean tooLong;
            try {
                tooLong = readLine(line);
            } catch (IOException e) {
                eof = true;
                ended.countDown();
                throw e;
            }
            if (line.isEmpty() && !tooLong && eof) {
                ended.countDown();
                return;
            }
            number++;
            if (tooLong) {
                refuse(
                        null,
                        INVALID_REQUEST,
                        "Invalid Request: a message is one line of at most " + maxLine + " characters");
            } else if (admitted(line.toString())) {
                current = (line + "\n").getBytes(StandardCharsets.UTF_8);
                at = 0;
            }
            if (eof) {
                ended.countDown();
            }
        }

        /**
         * One line into {@code line} (at most {@link #maxLine} characters of it), without its end; sets
         * {@link #eof} at the end of the input.
         *
         * @return whether the line was longer than {@link #maxLine}
         */
        private boolean readLine(StringBuilder line) throws IOException {
            boolean tooLong = false;
            while (true) {
                int c = in.read();
                if (c < 0) {
                    eof = true;
                    return tooLong;
                }
                if (c == '\n') {
                    return tooLong;
                }
                if (c == '\r') {
                    in.mark(1);
                    int n = in.read();
                    if (n != '\n' && n >= 0) {
                        in.reset();
                    }
                    return tooLong;
                }
                if (line.length() < maxLine) {
                    line.append((char) c);
                } else {
                    tooLong = true;
                }
            }
        }

        /** Whether the transport takes {@code line}; if not (and it is not blank), answers it. */
        private boolean admitted(String line) {
            if (line.chars().allMatch(c -> c == ' ' || c == '\t')) {
                return false;
            }
            Object value;
            try {
                value = mapper.readValue(line, Object.class);
            } catch (IOException | RuntimeException e) {
                refuse(null, PARSE_ERROR, "Parse error: the line is not JSON: " + cause(e));
                return false;
            }
            if (value instanceof List) {
                refuse(
                        null,
                        INVALID_REQUEST,
                        "Invalid Request: a batch (a JSON array) is not supported; MCP"
                                + " 2025-06-18 removed JSON-RPC batching: send each message as a JSON object on a line of"
                                + " its own");
                return false;
            }
            if (!(value instanceof Map<?, ?> message)) {
                refuse(null, INVALID_REQUEST, "Invalid Request: a message is a JSON object");
                return false;
            }
            try {
                McpSchema.deserializeJsonRpcMessage(mapper, line);
                return true;
            } catch (IOException | RuntimeException e) {
                refuse(
                        id(message.get("id")),
                        INVALID_REQUEST,
                        "Invalid Request: not a JSON-RPC request, notification or response: " + cause(e));
                return false;
            }
        }

        /** The request's id, when it is one (a string or an integer); otherwise null, as JSON-RPC says. */
        private static Object id(Object id) {
            return id instanceof String
                            || id instanceof Integer
                            || id instanceof Long
                            || id instanceof java.math.BigInteger
                    ? id
                    : null;
        }

        /** The first line of the innermost message: Jackson's words for what is wrong. */
        private static String cause(Throwable e) {
            Throwable t = e;
            while (t.getCause() != null && t.getCause() != t) {
                t = t.getCause();
            }
            String m = String.valueOf(t.getMessage()).lines().findFirst().orElse("");
            return m.length() > 200 ? m.substring(0, 200) + "…" : m;
        }

        private void refuse(Object id, int code, String message) {
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("code", code);
            error.put("message", message);
            Map<String, Object> response = new LinkedHashMap<>();
            response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
            response.put("id", id);
            response.put("error", error);
            try {
                out.line(mapper.writeValueAsString(response));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            err.println("fence mcp: input line " + number + ": answered " + code + " " + message);
            err.flush();
        }
    }

    /**
     * The transport's bytes onto the command's writer, a whole line at a time: a line ends with a newline
     * byte, which is never part of a longer UTF-8 sequence, so no character is split.
     */
    private static final class Lines extends OutputStream {
        private final PrintWriter out;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        Lines(PrintWriter out) {
            this.out = out;
        }

        @Override
        public synchronized void write(int b) {
            line.write(b);
            if (b == '\n') {
                emit();
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        @Override
        public synchronized void flush() {
            out.flush();
        }

        /** A whole message of fence's own, never inside one of the transport's (it holds those until their end). */
        synchronized void line(String message) {
            out.write(message + "\n");
            out.flush();
        }

        private void emit() {
            out.write(line.toString(StandardCharsets.UTF_8));
            out.flush();
            line.reset();
        }
    }
}
