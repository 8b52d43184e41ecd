package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lease commands as scripts use them: JSON fields, exit codes, and refusals that write nothing. */
class LeaseCommandTest {
    @TempDir
    Path tmp;

    record Result(int exit, String out, String err) {
        JsonNode json() throws Exception {
            return Json.read(out.strip());
        }
    }

    String store() {
        return "sqlite:" + tmp.resolve("fence.db");
    }

    Result fence(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                Map.of("HOME", tmp.toString()),
                Clock.systemUTC(),
                tmp);
        return new Result(Main.run(ctx, args), out.toString(), err.toString());
    }

    @Test
    void acquirePrintsTheContractFieldsAndBusyNamesTheHolder() throws Exception {
        Result r = fence(
                "lease",
                "acquire",
                "--store",
                store(),
                "--resource",
                "db/migrations",
                "--holder",
                "agent-a",
                "--ttl",
                "30s",
                "--json");
        assertEquals(0, r.exit(), r.err());
        JsonNode g = r.json();
        assertTrue(g.get("token").isIntegralNumber());
        assertTrue(g.get("proof").isTextual() && g.get("proof").asText().startsWith("fp2."));
        assertEquals("db/migrations", g.get("resource").asText());
        assertEquals("agent-a", g.get("holder").asText());
        Instant.parse(g.get("expiresAt").asText());
        assertFalse(g.get("generation").asText().isEmpty());

        Result busy = fence(
                "lease", "acquire", "--store", store(), "--resource", "db/migrations", "--holder", "agent-b", "--json");
        assertEquals(4, busy.exit());
        assertEquals("agent-a", busy.json().get("holder").asText());
        assertEquals(g.get("expiresAt").asText(), busy.json().get("expiresAt").asText());

        Result human = fence("lease", "acquire", "--store", store(), "--resource", "db/other", "--holder", "agent-a");
        assertEquals(0, human.exit());
        assertFalse(human.out().contains("fp2."), "human output never shows the proof");
    }

    /**
     * A holder that acquires its own live lease again replaces it: the message said the old lease "lapsed"
     * at a time still ahead. It says how each previous lease ended: replaced, released, lapsed.
     */
    @Test
    void thePreviousLeaseIsSaidToHaveEndedAsItDid() {
        String grant = tmp.resolve("q1.grant").toString();
        String[] acquire = {
            "lease", "acquire", "--store", store(), "--resource", "q1", "--holder", "agent-a", "--grant-file", grant
        };
        assertEquals(0, fence(acquire).exit());
        Result again = fence(acquire);
        assertEquals(0, again.exit(), again.err());
        assertTrue(
                again.out().matches("(?s).*previous lease: agent-a token \\d+ \\(replaced by this grant at [^)]+\\).*"),
                again.out());
        assertFalse(again.out().contains("lapsed"), again.out());
        assertEquals(
                0,
                fence("lease", "release", "--store", store(), "--grant-file", grant)
                        .exit());
        Result afterRelease = fence(acquire);
        assertTrue(
                afterRelease.out().matches("(?s).*previous lease: agent-a token \\d+ \\(released\\).*"),
                afterRelease.out());
        fence("lease", "acquire", "--store", store(), "--resource", "q2", "--holder", "agent-a", "--ttl", "1ms");
        Result afterLapse = fence("lease", "acquire", "--store", store(), "--resource", "q2", "--holder", "agent-b");
        assertTrue(
                afterLapse.out().matches("(?s).*previous lease: agent-a token \\d+ \\(lapsed [^)]+\\).*"),
                afterLapse.out());
    }

    @Test
    void renewAndReleaseOnlyForTheCurrentHolderAndToken() throws Exception {
        JsonNode g = fence(
                        "lease",
                        "acquire",
                        "--store",
                        store(),
                        "--repo",
                        "app",
                        "--ref",
                        "main",
                        "--holder",
                        "agent-a",
                        "--json")
                .json();
        String token = g.get("token").asText();
        String older = Long.toString(g.get("token").asLong() - 1);
        Result wrongToken = fence(
                "lease",
                "renew",
                "--store",
                store(),
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-a",
                "--ttl",
                "30s",
                "--token",
                older,
                "--proof",
                g.get("proof").asText());
        assertEquals(3, wrongToken.exit());
        assertTrue(wrongToken.err().startsWith("FENCED resource=git:app:refs/heads/main"), wrongToken.err());
        Result wrongHolder = fence(
                "lease",
                "release",
                "--store",
                store(),
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-b",
                "--token",
                token,
                "--proof",
                g.get("proof").asText());
        assertEquals(3, wrongHolder.exit());
        // A holder's name and token are public (FENCED messages, the ledger): without the proof, no release.
        Result noProof = fence(
                "lease",
                "release",
                "--store",
                store(),
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-a",
                "--token",
                token);
        assertEquals(2, noProof.exit(), noProof.err());
        assertTrue(noProof.err().contains("needs the proof its grant returned"), noProof.err());
        Result badProof = fence(
                "lease",
                "renew",
                "--store",
                store(),
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-a",
                "--ttl",
                "30s",
                "--token",
                token,
                "--proof",
                "fp2.x.YWdlbnQtYQ." + "A".repeat(43),
                "--json");
        assertEquals(3, badProof.exit());
        assertEquals("fenced", badProof.json().get("status").asText());
        Result renew = fence(
                "lease",
                "renew",
                "--store",
                store(),
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-a",
                "--token",
                token,
                "--proof",
                g.get("proof").asText(),
                "--ttl",
                "5m",
                "--json");
        assertEquals(0, renew.exit(), renew.err());
        assertEquals(
                0,
                fence(
                                "lease",
                                "release",
                                "--store",
                                store(),
                                "--repo",
                                "app",
                                "--ref",
                                "main",
                                "--holder",
                                "agent-a",
                                "--token",
                                token,
                                "--proof",
                                g.get("proof").asText())
                        .exit());
        JsonNode status = fence("lease", "status", "--store", store(), "--repo", "app", "--ref", "main", "--json")
                .json();
        assertTrue(status.get("lease").isNull(), "no live lease after release");
        assertEquals(g.get("token").asLong(), status.get("latestGranted").asLong());
        assertEquals(0, status.get("highestAccepted").asLong());
        assertTrue(status.has("lastWrite"));
    }

    @Test
    void malformedInputIsRefusedWithItsExitCodeAndWritesNothing() {
        String[][] usage = {
            {"--resource", ""},
            {"--resource", "x".repeat(600)},
            {"--resource", "bad\u0001name"},
            {"--resource", "ok", "--ttl", "-1"},
            {"--resource", "ok", "--ttl", "0"},
            {"--resource", "ok", "--ttl", "soon"},
            {"--repo", "app"},
        };
        for (String[] args : usage) {
            String[] full = concat(new String[] {"lease", "acquire", "--store", store(), "--holder", "agent-a"}, args);
            Result r = fence(full);
            assertEquals(2, r.exit(), String.join(" ", args) + "\n" + r.err());
            assertTrue(r.err().startsWith("fence: "), "a clear message: " + r.err());
            assertFalse(r.err().contains("\tat "), "no stack trace without --verbose");
        }
        Result scheme = fence("lease", "acquire", "--store", "mongodb://x", "--resource", "r", "--holder", "h");
        assertEquals(6, scheme.exit());
        assertTrue(scheme.err().contains("unknown store scheme 'mongodb'"), scheme.err());
        Result down = fence(
                "lease", "acquire", "--store", "redis://127.0.0.1:1?timeout=300ms", "--resource", "r", "--holder", "h");
        assertEquals(5, down.exit());
        assertTrue(down.err().contains("127.0.0.1:1"), down.err());
        Result verbose =
                fence("lease", "acquire", "--store", "mongodb://x", "--resource", "r", "--holder", "h", "--verbose");
        assertTrue(verbose.err().contains("\tat "), "--verbose shows the stack trace");
        try (var s = Stores.open(store(), StoreOptions.defaults())) {
            assertTrue(s.query(LedgerQuery.all()).isEmpty(), "nothing was written");
        }
    }

    @Test
    void helpListsTheExitCodesAndVersionAnswers() {
        // Each command its own codes (ExitCodesTest checks every command): acquire can be busy, not FENCED.
        Map<List<String>, List<Integer>> expected = Map.of(
                List.of("--help"), List.of(0, 2),
                List.of("lease", "acquire", "--help"), List.of(0, 2, 4, 5, 6, 70),
                List.of("lease", "renew", "--help"), List.of(0, 2, 3, 5, 6, 70),
                List.of("hook", "pre-receive", "--help"), List.of(0, 1, 2, 5, 6, 70));
        for (var e : expected.entrySet()) {
            Result r = fence(e.getKey().toArray(String[]::new));
            assertEquals(0, r.exit());
            String codes = r.out().substring(r.out().indexOf("Exit codes:"));
            for (int code = 0; code <= 125; code++) {
                String line = String.format("%3d   ", code);
                assertEquals(
                        e.getValue().contains(code),
                        codes.contains(line),
                        String.join(" ", e.getKey()) + " and exit code " + code + ":\n" + r.out());
            }
        }
        Result v = fence("--version");
        assertEquals(0, v.exit());
        assertTrue(v.out().startsWith("fence "), v.out());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
