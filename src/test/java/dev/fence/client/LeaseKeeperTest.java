package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Fenced;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.Reason;
import dev.fence.store.StoreOptions;
import dev.fence.store.sqlite.SqliteLeaseStore;
import dev.fence.testing.FakeClock;
import dev.fence.testing.ManualScheduler;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keeper's timing with a fake clock and a hand-driven scheduler, against a real SQLite store. */
class LeaseKeeperTest {
    static final String R = "db/migrations";
    static final Duration TTL = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    FakeClock clock;
    ManualScheduler scheduler;
    LeaseOperations leases;
    List<Fenced> lost = new ArrayList<>();
    List<String> trouble = new ArrayList<>();
    Grant grant;
    LeaseKeeper keeper;

    @BeforeEach
    void setUp() {
        clock = new FakeClock(Instant.parse("2026-11-29T14:00:00Z"));
        scheduler = new ManualScheduler(clock);
        leases = new LeaseService(SqliteLeaseStore.open(tmp.resolve("fence.db"), StoreOptions.defaults()), clock);
        grant = ((AcquireOutcome.Acquired) leases.acquire(R, "agent-a", TTL, null)).grant();
        keeper = keeper(grant.proof());
    }

    /** A keeper of agent-a's grant that shows {@code proof}, reporting to {@link #lost} and {@link #trouble}. */
    private LeaseKeeper keeper(String proof) {
        return new LeaseKeeper(
                leases, clock, scheduler, R, "agent-a", grant.token(), proof, TTL, new LeaseKeeper.Listener() {
                    @Override
                    public void lost(Fenced fenced) {
                        lost.add(fenced);
                    }

                    @Override
                    public void trouble(String message) {
                        trouble.add(message);
                    }
                });
    }

    @AfterEach
    void tearDown() {
        leases.close();
    }

    @Test
    void renewsEveryThirdOfTheTtlOnlyWhileStarted() {
        assertEquals(Duration.ofSeconds(10), keeper.interval());
        assertTrue(keeper.renewNow());
        assertEquals(clock.instant().plus(TTL), keeper.expiresAt());
        assertEquals(0, scheduler.pending(), "a keeper that is not started schedules nothing");

        keeper.start();
        assertEquals(clock.instant().plusSeconds(10), scheduler.nextDue());
        for (int i = 1; i <= 9; i++) {
            clock.advance(Duration.ofSeconds(10));
            scheduler.runDue();
            assertEquals(clock.instant().plus(TTL), keeper.expiresAt(), "renewal " + i);
        }
        assertEquals(10, keeper.renewals());

        keeper.stop();
        assertEquals(0, scheduler.pending());
        clock.advance(Duration.ofMinutes(5));
        scheduler.runDue();
        assertEquals(10, keeper.renewals(), "no renewal after stop: the lease lapses between tool calls");
        assertTrue(lost.isEmpty());
        assertTrue(trouble.isEmpty());
    }

    @Test
    void aLeaseTakenOverWhileTheKeeperWasPausedIsReportedOnceAndRenewalsStop() {
        keeper.renewNow();
        keeper.start();
        // The keeper's thread does not run for longer than the TTL (a paused process); B takes over.
        clock.advance(TTL.plusSeconds(1));
        assertInstanceOf(AcquireOutcome.Acquired.class, leases.acquire(R, "agent-b", TTL, null));

        scheduler.runDue();
        assertEquals(1, lost.size());
        Fenced f = lost.get(0);
        assertEquals(Reason.SUPERSEDED, f.reason());
        assertEquals(grant.token(), f.token());
        assertEquals("agent-b", f.currentHolder());
        assertEquals(f, keeper.lost());
        assertEquals(0, scheduler.pending(), "a lost lease is not renewed again");
        assertFalse(keeper.renewNow());
        assertEquals(1, lost.size(), "reported once");
    }

    @Test
    void aMalformedProofIsRefusedNotReportedAsPassingTrouble() {
        LeaseKeeper garbage = keeper("garbage");
        assertThrows(InvalidInputException.class, garbage::renewNow);
        assertTrue(trouble.isEmpty(), trouble::toString);
        assertTrue(lost.isEmpty());
    }

    @Test
    void aScheduledRenewalThatIsRefusedIsReportedAndRenewalsStop() {
        LeaseKeeper garbage = keeper("garbage");
        garbage.start();
        clock.advance(Duration.ofSeconds(10));
        scheduler.runDue();
        assertEquals(1, trouble.size(), trouble::toString);
        assertTrue(trouble.get(0).contains("stopped renewing the lease on " + R), trouble.get(0));
        assertEquals(0, scheduler.pending(), "a refused renewal is not retried");
    }

    @Test
    void aLapsedLeaseThatNoOneTookIsRenewed() {
        keeper.renewNow();
        clock.advance(TTL.plusSeconds(5));
        assertTrue(keeper.renewNow());
        assertNull(keeper.lost());
        assertEquals(clock.instant().plus(TTL), keeper.expiresAt());
    }

    @Test
    void aShortTtlRenewsNoMoreOftenThanTheMinimumInterval() {
        LeaseKeeper fast = new LeaseKeeper(
                leases, clock, scheduler, R, "agent-a", grant.token(), null, Duration.ofMillis(90), null);
        assertEquals(LeaseKeeper.MIN_INTERVAL, fast.interval());
    }
}
