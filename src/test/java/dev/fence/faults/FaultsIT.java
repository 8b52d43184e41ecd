package dev.fence.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.testing.ProcessTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * One quick fault end to end: a Redis with {@code appendfsync always} killed -9 mid-load and restarted from
 * its AOF, with real clients, the real {@code git}, the installed hook and the history checks. Such a Redis
 * loses nothing, so the run must pass: with grants and accepted pushes on both sides of the kill, stale
 * pushes tried and refused, and no anomaly. Then (where the PostgreSQL server binaries are installed) both
 * PostgreSQL promotions: a synchronous standby keeps every acknowledged grant, an asynchronous one cut off
 * before the kill loses some, and in both the clients see one new generation and no anomaly. And the two
 * losses a Redis cannot notice, as they keep its run id (an older snapshot reloaded in place, a state hash
 * evicted during a moment of allkeys-random): no new generation, and still no token repeated and no stale
 * push accepted.
 */
@ProcessTest
class FaultsIT {
    /** A run of {@code faults} (3 clients, 5 s, seed 42) and its table and progress, for messages. */
    private record Run(FaultsReport report, String context) {}

    /**
     * Runs {@code faults} and asserts what every fault's run must show: a safe verdict, each fault passed
     * with no anomaly and no stale push accepted, and grants after the fault.
     */
    private static Run safely(Fault... faults) throws Exception {
        StringWriter progress = new StringWriter();
        Faults.Options options = new Faults.Options(3, Duration.ofSeconds(5), List.of(faults), false, null, 42);
        FaultsReport report = Faults.run(options, System.getenv(), new PrintWriter(progress, true));
        String context = report.toTable() + "\n" + progress;
        assertEquals(FaultsReport.Verdict.SAFE, report.verdict(), context);
        for (FaultResult r : report.results()) {
            assertEquals(FaultResult.Status.PASSED, r.status(), context);
            assertEquals(0, r.findings().total(), context);
            assertEquals(0, r.stalePushesAccepted(), context);
            assertTrue(r.grantsAfterFault() > 0, "no grant after the fault:\n" + context);
        }
        return new Run(report, context);
    }

    @Test
    void aRedisWithAppendfsyncAlwaysKilledMidLoadLosesNothing() throws Exception {
        Run run = safely(Fault.REDIS_KILL_AOF_ALWAYS);
        FaultResult r = run.report().results().get(0);
        assertTrue(r.pushesAccepted() >= 2, "too few accepted pushes:\n" + run.context());
        assertTrue(r.notes().stream().anyMatch(n -> n.startsWith("kill -9")), run.context());
    }

    private static final Pattern RELOADED = Pattern.compile("then (\\d+) grants, then the copy put back");
    private static final Pattern EVICTED = Pattern.compile("the state of at least (\\d+) of (\\d+) resources");

    @Test
    void lossesTheRedisCannotNoticeRepeatNoGrantAndLandNoStalePush() throws Exception {
        Run run = safely(Fault.REDIS_DEBUG_RELOAD, Fault.REDIS_EVICTION_WINDOW);
        String context = run.context();
        for (FaultResult r : run.report().results()) {
            if (r.fault() == Fault.REDIS_DEBUG_RELOAD) {
                String note = r.notes().stream()
                        .filter(n -> RELOADED.matcher(n).find())
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no reload note:\n" + context));
                Matcher m = RELOADED.matcher(note);
                assertTrue(m.find() && Long.parseLong(m.group(1)) > 0, "nothing to lose:\n" + context);
                assertTrue(note.contains("the marker written after the SAVE is gone"), "no rollback:\n" + context);
                assertTrue(note.contains("run_id and master_replid unchanged"), context);
                assertEquals(0, r.generationChanges(), "the reload is not seen as a new generation:\n" + context);
            } else {
                Matcher m = r.notes().stream()
                        .map(EVICTED::matcher)
                        .filter(Matcher::find)
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no eviction note:\n" + context));
                assertTrue(Long.parseLong(m.group(1)) > 0, "no resource's state was evicted:\n" + context);
            }
        }
    }

    private static final Pattern LOST = Pattern.compile("(\\d+) of the (\\d+) grants acknowledged before the kill");

    @Test
    void aPromotedPostgresStandbyStartsANewGenerationAndNothingIsGrantedTwice() throws Exception {
        String path = System.getenv("PATH");
        String cannot = PrivatePostgres.cannotRun(PrivatePostgres.findBin(path), Children.find(path, "runuser"));
        assumeTrue(cannot == null, cannot);
        Run run = safely(Fault.POSTGRES_PROMOTE, Fault.POSTGRES_PROMOTE_ASYNC);
        String context = run.context();
        for (FaultResult r : run.report().results()) {
            assertEquals(1, r.generationChanges(), "the promotion is one new generation:\n" + context);
            Matcher lost = r.notes().stream()
                    .map(LOST::matcher)
                    .filter(Matcher::find)
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no count of lost grants:\n" + context));
            long n = Long.parseLong(lost.group(1));
            if (r.fault() == Fault.POSTGRES_PROMOTE) {
                assertEquals(0, n, "a synchronous standby lost acknowledged grants:\n" + context);
            } else {
                assertTrue(n > 0, "the cut-off standby lost nothing, so the fault was not injected:\n" + context);
            }
        }
    }
}
