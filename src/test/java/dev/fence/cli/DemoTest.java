package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.testing.RedisServer;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's first command, run as CI runs it: it fails the build if any expected outcome is missing. */
class DemoTest {
    @TempDir
    Path home;

    private record Result(int exit, String out, String err) {}

    private Result demo(String... extra) {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", home.toString());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] args = new String[extra.length + 1];
        args[0] = "demo";
        System.arraycopy(extra, 0, args, 1, extra.length);
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                env,
                Clock.systemUTC(),
                home);
        return new Result(Main.run(ctx, args), out.toString(), err.toString());
    }

    private static void assertAllOutcomes(Result r) {
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("Result: all "), r.out());
        assertFalse(r.out().contains("MISSING"), r.out());
        for (String reason :
                new String[] {"superseded", "bad-proof", "stale-token", "token-required", "foreign-overwrite"}) {
            assertTrue(r.out().contains("reason=" + reason), reason + " in\n" + r.out());
        }
        assertTrue(
                r.out().contains("GRANT")
                        && r.out().contains("EXPIRE")
                        && r.out().contains("REJECT"),
                "ends with the timeline");
        assertFalse(r.out().contains("fp1."), "no proof is ever printed");
    }

    @Test
    void replaysTheIncidentOnTheEmbeddedSqliteDefault() {
        assertAllOutcomes(demo("--progress", "never"));
    }

    @Test
    void replaysTheIncidentOnRedis() {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer server = RedisServer.start()) {
            assertAllOutcomes(demo("--store", server.url(), "--progress", "never"));
        }
    }
}
