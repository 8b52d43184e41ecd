package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence migrate}, {@code fence write} and {@code fence read} as an agent's harness runs them: the
 * options, the output and the exit codes the issue spells out, on a SQLite lease store and database.
 */
class MigrateAndWriteCommandTest {
    @TempDir
    Path tmp;

    record Result(int exit, String out, String err) {
        String all() {
            return "exit " + exit + "\n" + out + "\n" + err;
        }
    }

    Result fence(String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Context ctx = new Context(
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintWriter(out),
                new PrintWriter(err),
                Map.of("HOME", tmp.toString(), "FENCE_STORE", "sqlite:" + tmp.resolve("fence.db")),
                Clock.systemUTC(),
                tmp);
        return new Result(Main.run(ctx, args), out.toString(), err.toString());
    }

    JsonNode acquire(String resource, String holder) throws Exception {
        Result r = fence("", "lease", "acquire", "--resource", resource, "--holder", holder, "--json");
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out().strip());
    }

    @BeforeEach
    void migrations() throws Exception {
        Files.createDirectories(tmp.resolve("m"));
        Files.writeString(
                tmp.resolve("m/0041_create_invoices.sql"), "CREATE TABLE invoices (id INTEGER PRIMARY KEY);\n");
        Files.writeString(
                tmp.resolve("m/0042_add_invoice_currency.sql"), "ALTER TABLE invoices ADD COLUMN currency TEXT;\n");
    }

    @Test
    void migrateAppliesReportsAndFencesWithTheExitCodesItDocuments() throws Exception {
        JsonNode a = acquire("db/migrations", "agent-A");
        String token = a.get("token").asText();
        Result applied = fence(
                "",
                "migrate",
                "apply",
                "--db",
                "sqlite:app.db",
                "--dir",
                "m",
                "--holder",
                "agent-A",
                "--token",
                token,
                "--proof",
                a.get("proof").asText());
        assertEquals(0, applied.exit(), applied.all());
        assertTrue(applied.out().contains("applied 0042_add_invoice_currency.sql under token " + token), applied.out());

        Result status = fence("", "migrate", "status", "--db", "sqlite:app.db", "--dir", "m", "--json");
        assertEquals(0, status.exit(), status.all());
        JsonNode s = Json.read(status.out().strip());
        assertEquals(token, s.get("fenceToken").asText());
        assertEquals("agent-A", s.get("migrations").get(1).get("appliedHolder").asText());

        // Another holder's reapply of A's version: FENCED, with the re-read command; the proof from FENCE_PROOF.
        fence(
                "",
                "lease",
                "release",
                "--resource",
                "db/migrations",
                "--holder",
                "agent-A",
                "--token",
                token,
                "--proof",
                a.get("proof").asText());
        JsonNode b = acquire("db/migrations", "agent-B");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                Map.of(
                        "HOME", tmp.toString(),
                        "FENCE_STORE", "sqlite:" + tmp.resolve("fence.db"),
                        "FENCE_PROOF", b.get("proof").asText()),
                Clock.systemUTC(),
                tmp);
        int exit = Main.run(
                ctx,
                "migrate",
                "reapply",
                "--version",
                "0042",
                "--db",
                "sqlite:app.db",
                "--dir",
                "m",
                "--holder",
                "agent-B",
                "--token",
                b.get("token").asText());
        assertEquals(3, exit, err.toString());
        assertTrue(
                err.toString()
                        .startsWith("FENCED resource=db/migrations ref=- token="
                                + b.get("token").asText()),
                err.toString());
        assertTrue(err.toString().contains("reason=foreign-overwrite"), err.toString());
        assertTrue(err.toString().contains("fence migrate status --db sqlite:"), err.toString());

        // A's stale token, renumbering: FENCED (3).
        Files.writeString(tmp.resolve("m/0043_add_invoice_currency.sql"), "ALTER TABLE invoices ADD COLUMN c2 TEXT;\n");
        Result stale = fence(
                "",
                "migrate",
                "apply",
                "--version",
                "0043",
                "--db",
                "sqlite:app.db",
                "--dir",
                "m",
                "--holder",
                "agent-A",
                "--token",
                token,
                "--proof",
                a.get("proof").asText());
        assertEquals(3, stale.exit(), stale.all());

        // Bad input (2), failing SQL (1), database down (5).
        Result bad = fence(
                "",
                "migrate",
                "apply",
                "--version",
                "4x2",
                "--db",
                "sqlite:app.db",
                "--dir",
                "m",
                "--holder",
                "agent-B",
                "--token",
                b.get("token").asText(),
                "--proof",
                b.get("proof").asText());
        assertEquals(2, bad.exit(), bad.all());
        Files.writeString(tmp.resolve("m/0044_broken.sql"), "SELECT 1;\nUPDATE nowhere SET x = 1;\n");
        Result failing = fence(
                "",
                "migrate",
                "apply",
                "--version",
                "0044",
                "--db",
                "sqlite:app.db",
                "--dir",
                "m",
                "--holder",
                "agent-B",
                "--token",
                b.get("token").asText(),
                "--proof",
                b.get("proof").asText());
        assertEquals(1, failing.exit(), failing.all());
        assertTrue(failing.err().contains("0044_broken.sql line 2"), failing.err());
        Result down = fence("", "migrate", "status", "--db", "postgresql://nobody@127.0.0.1:1/nothing", "--dir", "m");
        assertEquals(5, down.exit(), down.all());
    }

    @Test
    void writeAndReadAreTheFileCompareAndSwap() throws Exception {
        JsonNode g = acquire("file:notes.md", "agent-A");
        String token = g.get("token").asText();
        String proof = g.get("proof").asText();
        Result missing = fence("", "read", "--path", "notes.md");
        assertEquals(0, missing.exit(), missing.all());
        assertTrue(missing.out().startsWith("sha256 " + "0".repeat(64)), missing.out());

        Result created = fence(
                "first\n",
                "write",
                "--path",
                "notes.md",
                "--expected-sha256",
                "0".repeat(64),
                "--resource",
                "file:notes.md",
                "--holder",
                "agent-A",
                "--token",
                token,
                "--proof",
                proof);
        assertEquals(0, created.exit(), created.all());
        String sha = created.out().strip();
        assertEquals(64, sha.length(), created.out());

        Result read = fence("", "read", "--path", "notes.md");
        assertEquals("sha256 " + sha + "\nfirst\n", read.out());

        Files.writeString(tmp.resolve("content.txt"), "second\n");
        Result stale = fence(
                "",
                "write",
                "--path",
                "notes.md",
                "--expected-sha256",
                "0".repeat(64),
                "--content-file",
                "content.txt",
                "--resource",
                "file:notes.md",
                "--holder",
                "agent-A",
                "--token",
                token,
                "--proof",
                proof);
        assertEquals(3, stale.exit(), stale.all());
        assertTrue(stale.err().contains("reason=file-changed"), stale.err());
        assertTrue(stale.err().contains("fence read --path notes.md"), stale.err());
        assertEquals("first\n", Files.readString(tmp.resolve("notes.md")));

        Result outside = fence(
                "x",
                "write",
                "--path",
                "../escape.md",
                "--expected-sha256",
                "0".repeat(64),
                "--resource",
                "file:notes.md",
                "--holder",
                "agent-A",
                "--token",
                token,
                "--proof",
                proof);
        assertEquals(2, outside.exit(), outside.all());
        assertTrue(outside.err().contains("outside the root"), outside.err());

        Result second = fence(
                "",
                "write",
                "--path",
                "notes.md",
                "--expected-sha256",
                sha,
                "--content-file",
                "content.txt",
                "--resource",
                "file:notes.md",
                "--holder",
                "agent-A",
                "--token",
                token,
                "--proof",
                proof);
        assertEquals(0, second.exit(), second.all());
        assertEquals("second\n", Files.readString(tmp.resolve("notes.md")));
    }

    /** A relative --path is under --root, whatever the working directory (here tmp, with a sub of its own). */
    @Test
    void aRelativePathResolvesAgainstTheRootNotTheWorkingDirectory() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root/sub"));
        Files.createDirectories(tmp.resolve("sub"));
        Files.writeString(root.resolve("f.txt"), "in root\n");
        Result read = fence("", "read", "--root", "root", "--path", "sub/f.txt");
        assertEquals(0, read.exit(), read.all());
        assertTrue(read.out().contains("in root"), read.all());
        JsonNode g = acquire("file:sub/f.txt", "agent-A");
        Result w = fence(
                "new\n",
                "write",
                "--root",
                "root",
                "--path",
                "sub/f.txt",
                "--expected-sha256",
                dev.fence.files.SharedFiles.sha256("in root\n".getBytes(StandardCharsets.UTF_8)),
                "--resource",
                "file:sub/f.txt",
                "--holder",
                "agent-A",
                "--token",
                g.get("token").asText(),
                "--proof",
                g.get("proof").asText());
        assertEquals(0, w.exit(), w.all());
        assertEquals("new\n", Files.readString(root.resolve("f.txt")));
        assertFalse(Files.exists(tmp.resolve("sub/f.txt")));
    }

    /** Over the 16 MiB fence reads and writes: exit 2 with the limit, not an OutOfMemoryError (exit 1). */
    @Test
    void aFileOrContentTooLargeIsBadInput() throws Exception {
        try (var f = new java.io.RandomAccessFile(tmp.resolve("huge.bin").toFile(), "rw")) {
            f.setLength(3L << 30);
        }
        Result read = fence("", "read", "--path", "huge.bin");
        assertEquals(2, read.exit(), read.all());
        assertTrue(read.err().contains("more than the 16 MiB"), read.all());
        JsonNode g = acquire("file:notes.md", "agent-A");
        Result write = fence(
                "",
                "write",
                "--path",
                "notes.md",
                "--expected-sha256",
                "0".repeat(64),
                "--content-file",
                "huge.bin",
                "--resource",
                "file:notes.md",
                "--holder",
                "agent-A",
                "--token",
                g.get("token").asText(),
                "--proof",
                g.get("proof").asText());
        assertEquals(2, write.exit(), write.all());
        assertTrue(write.err().contains("more than the 16 MiB"), write.all());
        assertFalse(Files.exists(tmp.resolve("notes.md")));
    }

    @Test
    void helpListsTheExitCodes() {
        for (String[] cmd :
                new String[][] {{"migrate", "apply", "--help"}, {"migrate", "reapply", "--help"}, {"write", "--help"}
                }) {
            Result r = fence("", cmd);
            assertEquals(0, r.exit(), r.all());
            assertTrue(r.out().contains("Exit codes:") && r.out().contains("FENCED"), r.out());
        }
        // Reading cannot be fenced: its help does not claim it can.
        for (String[] cmd : new String[][] {{"migrate", "status", "--help"}, {"read", "--help"}}) {
            Result r = fence("", cmd);
            assertEquals(0, r.exit(), r.all());
            assertTrue(r.out().contains("Exit codes:") && !r.out().contains("FENCED:"), r.out());
        }
    }
}
