package dev.fence.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.FenceMcpCommand;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@code fence mcp} on a SQLite store file, with the file and migration tools. */
class SqliteMcpServerTest extends McpServerTestBase {
    static final String ZEROS = "0".repeat(64);

    @Override
    protected String storeUrl(Path tmp) {
        return "sqlite:" + tmp.resolve("fence.db");
    }

    /**
     * The process itself, fed raw lines as a careless client or model might send them: each bad line gets
     * a JSON-RPC error, the next is served, and the process exits when its input ends.
     */
    @Test
    void aBadLineIsAnsweredAndTheProcessGoesOnThenExitsWhenItsInputEnds() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(FenceMcpCommand.command(store, cloneA));
        pb.environment().clear();
        pb.environment().putAll(git.env());
        pb.redirectError(tmp.resolve("mcp.err").toFile());
        Process p = pb.start();
        try {
            var in = new java.io.PrintWriter(p.getOutputStream(), true, java.nio.charset.StandardCharsets.UTF_8);
            var out = new java.io.BufferedReader(
                    new java.io.InputStreamReader(p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
            in.println(MalformedLinesTest.INIT);
            assertEquals(1, dev.fence.json.Json.read(out.readLine()).get("id").asInt());
            in.println(MalformedLinesTest.INITIALIZED);
            in.println("{not json");
            var parse = dev.fence.json.Json.read(out.readLine());
            assertEquals(-32700, parse.get("error").get("code").asInt(), parse.toString());
            assertTrue(parse.get("id").isNull(), parse.toString());
            in.println("[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}]");
            var batch = dev.fence.json.Json.read(out.readLine());
            assertEquals(-32600, batch.get("error").get("code").asInt(), batch.toString());
            in.println("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
                    + "\"lease_status\",\"arguments\":{\"branch\":\"main\"}}}");
            var status = dev.fence.json.Json.read(out.readLine());
            assertEquals(3, status.get("id").asInt(), status.toString());
            assertEquals(false, status.get("result").get("isError").asBoolean(), status.toString());
            in.println("{not json either");
            assertEquals(
                    -32700,
                    dev.fence.json.Json.read(out.readLine())
                            .get("error")
                            .get("code")
                            .asInt());
            in.close();
            assertTrue(p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS), "the process exits at the input's end");
            assertEquals(0, p.exitValue());
            String err = Files.readString(tmp.resolve("mcp.err"));
            assertTrue(err.contains("-32700") && err.contains("-32600"), err);
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void writeFileAndApplyMigrationGoUnderTheServersGrantsAndAreFencedWithoutThem() throws Exception {
        Path m = Files.createDirectories(tmp.resolve("m"));
        Files.writeString(m.resolve("0041_create_invoices.sql"), "CREATE TABLE invoices (id INTEGER PRIMARY KEY);\n");
        Files.writeString(m.resolve("0042_add_currency.sql"), "ALTER TABLE invoices ADD COLUMN currency TEXT;\n");
        start(
                "--files-resource",
                "shared/notes",
                "--db",
                "sqlite:" + tmp.resolve("app.db"),
                "--migrations",
                m.toString());
        assertTrue(client.listTools().tools().stream()
                .map(McpSchema.Tool::name)
                .collect(Collectors.toSet())
                .containsAll(java.util.List.of("read_file", "write_file", "apply_migration")));

        var unleased = call("write_file", Map.of("path", "notes.txt", "content", "x\n", "expected_sha256", ZEROS));
        assertTrue(unleased.isError(), text(unleased));
        assertEquals(true, structured(unleased).get("fenced"), text(unleased));
        assertFalse(Files.exists(cloneA.resolve("notes.txt")));

        assertFalse(Boolean.TRUE.equals(call("lease_acquire", Map.of("resource", "shared/notes", "ttl", "30s"))
                .isError()));
        Map<String, Object> read = structured(call("read_file", Map.of("path", "notes.txt")));
        assertEquals(ZEROS, read.get("sha256"));
        assertEquals(false, read.get("exists"));
        var wrote = call("write_file", Map.of("path", "notes.txt", "content", "A's plan\n", "expected_sha256", ZEROS));
        assertFalse(Boolean.TRUE.equals(wrote.isError()), text(wrote));
        assertEquals("A's plan\n", Files.readString(cloneA.resolve("notes.txt")));
        String sha = (String)
                structured(call("read_file", Map.of("path", "notes.txt"))).get("sha256");
        assertEquals(sha, structured(wrote).get("sha256"));

        var stale = call("write_file", Map.of("path", "notes.txt", "content", "again\n", "expected_sha256", ZEROS));
        assertTrue(stale.isError());
        assertEquals(true, structured(stale).get("fenced"));
        assertEquals("file-changed", structured(stale).get("reason"));
        assertEquals("read_file {\"path\": \"notes.txt\"}", structured(stale).get("reread"));
        assertEquals("A's plan\n", Files.readString(cloneA.resolve("notes.txt")), "nothing written");
        var badHash = call("write_file", Map.of("path", "notes.txt", "content", "x", "expected_sha256", "abc"));
        assertEquals("expected_sha256", structured(badHash).get("argument"), text(badHash));

        assertFalse(Boolean.TRUE.equals(call("lease_acquire", Map.of("resource", "db/migrations", "ttl", "30s"))
                .isError()));
        var applied = call("apply_migration", Map.of("version", "0041"));
        assertFalse(Boolean.TRUE.equals(applied.isError()), text(applied));
        assertTrue(text(applied).startsWith("Applied 0041_create_invoices.sql under token "), text(applied));
        var again = call("apply_migration", Map.of("version", 41));
        assertTrue(text(again).startsWith("Already applied: 0041"), text(again));
        assertEquals(
                "version",
                structured(call("apply_migration", Map.of("version", "x"))).get("argument"));

        assertEquals(
                true,
                structured(call("lease_release", Map.of("resource", "db/migrations")))
                        .get("released"));
        var released = call("apply_migration", Map.of("version", "0042"));
        assertTrue(released.isError(), text(released));
        assertEquals(true, structured(released).get("fenced"), text(released));
        var status = fence.run(
                tmp, "migrate", "status", "--db", "sqlite:" + tmp.resolve("app.db"), "--dir", m.toString(), "--json");
        assertEquals(0, status.exit(), status.all());
        var migrations = dev.fence.json.Json.read(status.out()).get("migrations");
        assertEquals(true, migrations.get(0).get("applied").asBoolean(), status.out());
        assertEquals("agent-a", migrations.get(0).get("appliedHolder").asText(), status.out());
        assertEquals(false, migrations.get(1).get("applied").asBoolean(), "0042 was not applied: " + status.out());
    }
}
