package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.faults.Fault;
import dev.fence.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence faults}' command line. A fault that cannot run here is reported as skipped with its reason
 * and never counts as passed: a run in which nothing ran does not exit 0. (FaultsIT runs a real fault.)
 */
class FaultsCommandTest {
    @TempDir
    Path tmp;

    private record Run(int exit, String out, String err) {}

    private static Run faults(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] all = new String[args.length + 1];
        all[0] = "faults";
        System.arraycopy(args, 0, all, 1, args.length);
        int exit = Main.run(
                InputStream.nullInputStream(), new PrintWriter(out, true), new PrintWriter(err, true), env, all);
        return new Run(exit, out.toString(), err.toString());
    }

    private static Map<String, String> env(String path) {
        Map<String, String> env = new HashMap<>();
        env.put("HOME", "/nonexistent");
        env.put("PATH", path);
        return env;
    }

    @Test
    void helpNamesEveryFaultEveryOptionAndTheExitCodes() {
        Run r = faults(env(System.getenv("PATH")), "--help");
        assertEquals(0, r.exit(), r.err());
        for (Fault f : Fault.values()) {
            assertTrue(r.out().contains(f.id()), f.id() + " missing from:\n" + r.out());
        }
        for (String option : new String[] {"--clients", "--seconds", "--fault", "--json", "--keep", "--seed"}) {
            assertTrue(r.out().contains(option), option + " missing from:\n" + r.out());
        }
        String flat = r.out().replaceAll("\\s+", " ");
        assertTrue(flat.contains("1 (REJECTED) when some fault found anomalies"), r.out());
    }

    @Test
    void anUnknownFaultIsAUsageErrorNamingTheKnownOnes() {
        Run r = faults(env(System.getenv("PATH")), "--fault", "redis-kill-everything");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("no fault named 'redis-kill-everything'"), r.err());
        assertTrue(r.err().contains("redis-kill-rdb"), r.err());
    }

    @Test
    void clientsAndSecondsAreBounded() {
        assertEquals(ExitCode.USAGE.code(), faults(env(""), "--clients", "0").exit());
        assertEquals(ExitCode.USAGE.code(), faults(env(""), "--clients", "33").exit());
        assertEquals(ExitCode.USAGE.code(), faults(env(""), "--seconds", "1").exit());
    }

    @Test
    void aFaultThatCannotRunIsSkippedWithItsReasonAndNothingRanIsNotAPass() throws IOException {
        // git is there, redis-server is not.
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path git = Path.of("/usr/bin/git");
        Files.createSymbolicLink(bin.resolve("git"), Files.exists(git) ? git : Path.of("/bin/git"));
        Run r = faults(
                env(bin.toString()),
                "--fault",
                "redis-kill-rdb",
                "--fault",
                "postgres-promote",
                "--fault",
                "postgres-promote-async");
        assertEquals(ExitCode.CONFIG.code(), r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("redis-kill-rdb") && r.out().contains("redis-server is not on PATH"), r.out());
        for (String pg : new String[] {"postgres-promote ", "postgres-promote-async "}) {
            assertTrue(r.out().lines().anyMatch(l -> l.startsWith(pg) && l.contains("initdb is not on PATH")), r.out());
        }
        assertFalse(r.out().contains("passed"), r.out());
    }

    @Test
    void jsonReportsSkippedFaultsAndTheVerdict() throws IOException {
        Run r = faults(env(""), "--fault", "redis-eviction", "--json");
        assertEquals(ExitCode.CONFIG.code(), r.exit(), r.err());
        JsonNode n = Json.read(r.out());
        assertEquals("incomplete", n.get("verdict").asText());
        JsonNode f = n.get("faults").get(0);
        assertEquals("redis-eviction", f.get("fault").asText());
        assertEquals("skipped", f.get("status").asText());
        assertEquals("git is not on PATH", f.get("reason").asText());
    }
}
