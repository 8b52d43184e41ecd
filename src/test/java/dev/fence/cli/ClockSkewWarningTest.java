package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.PrivateRedis;
import dev.fence.testing.ProcessTest;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A client whose clock is far from the store's is told so: the store's clock decides lease expiry. */
@ProcessTest
class ClockSkewWarningTest {
    @RegisterExtension
    static final PrivateRedis redis = new PrivateRedis();

    @TempDir
    Path tmp;

    private String[] acquire(Clock clock, String holder) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                Map.of("HOME", tmp.toString()),
                clock,
                tmp);
        int exit = Main.run(
                ctx,
                "lease",
                "acquire",
                "--store",
                redis.empty().url(),
                "--resource",
                "db/" + holder,
                "--holder",
                holder,
                "--json");
        assertEquals(0, exit, err.toString());
        return new String[] {out.toString(), err.toString()};
    }

    @Test
    void aClockAnHourSlowIsReportedAndTheLeaseRunsOnTheStoresClock() {
        String[] slow = acquire(Clock.offset(Clock.systemUTC(), Duration.ofHours(-1)), "agent-slow");
        assertTrue(slow[1].matches("(?s).*warning: this machine's clock is (59|60)m behind the store's.*"), slow[1]);
        String[] fine = acquire(Clock.systemUTC(), "agent-fine");
        assertFalse(fine[1].contains("clock"), fine[1]);
    }
}
