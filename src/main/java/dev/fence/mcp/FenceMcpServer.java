package dev.fence.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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

    private FenceMcpServer() {}

    /**
     * Serves {@code tools} on {@code in} and {@code out} until {@code in} ends (the client closed it).
     * Nothing else may write to {@code out}.
     *
     * @param rule the ownership rule, served as the prompt {@link #RULE_PROMPT}
     * @param version the server's version, as the client sees it
     */
    public static void serve(FenceTools tools, String rule, String version, InputStream in, PrintWriter out)
            throws InterruptedException {
        McpJsonMapper mapper = McpJsonDefaults.getMapper();
        CountDownLatch ended = new CountDownLatch(1);
        var transport = new StdioServerTransportProvider(mapper, new UntilEnd(in, ended), new Lines(out));
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

    /** The client's messages; counts {@code ended} down when they end (EOF or a read error). */
    private static final class UntilEnd extends FilterInputStream {
        private final CountDownLatch ended;

        UntilEnd(InputStream in, CountDownLatch ended) {
            super(in);
            this.ended = ended;
        }

        @Override
        public int read() throws IOException {
            try {
                return check(super.read());
            } catch (IOException e) {
                ended.countDown();
                throw e;
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return check(super.read(b, off, len));
            } catch (IOException e) {
                ended.countDown();
                throw e;
            }
        }

        private int check(int n) throws IOException {
            if (n < 0) {
                ended.countDown();
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            ended.countDown();
            super.close();
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

        private void emit() {
            out.write(line.toString(StandardCharsets.UTF_8));
            out.flush();
            line.reset();
        }
    }
}
