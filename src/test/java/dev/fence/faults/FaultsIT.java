package dev.fence.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One quick fault end to end: a Redis with {@code appendfsync always} killed -9 mid-load and restarted from
 * its AOF, with real clients, the real {@code git}, the installed hook and the history checks. Such a Redis
 * loses nothing, so the run must pass: with grants and accepted pushes on both sides of the kill, stale
 * pushes tried and refused, and no anomaly.
 */
class FaultsIT {
    @Test
    void aRedisWithAppendfsyncAlwaysKilledMidLoadLosesNothing() throws Exception {
        StringWriter progress = new StringWriter();
        Faults.Options options =
                new Faults.Options(3, Duration.ofSeconds(5), List.of(Fault.REDIS_KILL_AOF_ALWAYS), false, null, 42);
        FaultsReport report = Faults.run(options, System.getenv(), new PrintWriter(progress, true));
        FaultResult r = report.results().get(0);
        String context = report.toTable() + "\n" + progress;
        assertEquals(FaultResult.Status.PASSED, r.status(), context);
        assertEquals(FaultsReport.Verdict.SAFE, report.verdict(), context);
        assertEquals(0, r.findings().total(), context);
        assertTrue(r.grantsAfterFault() > 0, "no grant after the restart:\n" + context);
        assertTrue(r.pushesAccepted() >= 2, "too few accepted pushes:\n" + context);
        assertEquals(0, r.stalePushesAccepted(), context);
        assertTrue(r.notes().stream().anyMatch(n -> n.startsWith("kill -9")), context);
    }
}
