package dev.fence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.LedgerEvent;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Lease bars as the ledger has them: held, lapsed, and held again after a renewal. */
class TimelineModelTest {
    private static final String RES = "git:app:refs/heads/main";
    private static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");
    private static final Instant END = T0.plusSeconds(600);

    private static Instant at(int s) {
        return T0.plusSeconds(s);
    }

    private static LedgerEvent lease(int s, long seq, EventType type, String holder, long token) {
        return LedgerEvent.lease(at(s), type, RES, holder, token).withSeq(seq);
    }

    private static LedgerEvent accept(int s, long seq, String holder, long token) {
        return new LedgerEvent(
                seq,
                at(s),
                EventType.ACCEPT,
                RES,
                "app",
                "refs/heads/main",
                holder,
                holder,
                token,
                "1".repeat(40),
                "2".repeat(40),
                "accepted",
                null);
    }

    private static boolean heldAt(List<TimelineModel.Bar> bars, Instant t) {
        return bars.stream().anyMatch(b -> !t.isBefore(b.from()) && !t.isAfter(b.heldUntil()));
    }

    @Test
    void aLeaseRenewedAfterItsLapseIsHeldAgainFromTheRenewal() {
        // The store appends the expire (dated at the lapse) and the renew in one step, in that order.
        List<LedgerEvent> events = List.of(
                lease(0, 1, EventType.GRANT, "agent-a", 5),
                lease(60, 2, EventType.EXPIRE, "agent-a", 5),
                lease(90, 3, EventType.RENEW, "agent-a", 5),
                accept(120, 4, "agent-a", 5));

        TimelineModel.Resource r = TimelineModel.build(events, T0, END).get(0);

        assertEquals(List.of("agent-a"), r.lanes());
        assertEquals(2, r.bars().size(), r.bars().toString());
        TimelineModel.Bar lapsed = r.bars().get(0);
        assertEquals(at(0), lapsed.from());
        assertEquals(at(60), lapsed.heldUntil(), "held until its expiry");
        assertEquals(at(90), lapsed.to(), "lapsed until the renewal, not until the window's end");
        assertEquals(TimelineModel.End.RENEWED, lapsed.end());
        assertTrue(lapsed.lapsed());
        TimelineModel.Bar again = r.bars().get(1);
        assertEquals(new TimelineModel.Bar("agent-a", 5, at(90), END, END, TimelineModel.End.OPEN), again);
        assertFalse(again.lapsed());

        Instant pushed = r.marks().get(0).event().at();
        assertEquals(at(120), pushed);
        assertTrue(heldAt(r.bars(), pushed), "the accept is drawn while the lease is held: " + r.bars());
    }

    @Test
    void aRenewalWhoseExpiryIsBeforeTheWindowIsLapsedFromTheWindowsStart() {
        List<LedgerEvent> events =
                List.of(lease(90, 3, EventType.RENEW, "agent-a", 5), lease(200, 4, EventType.RELEASE, "agent-a", 5));

        TimelineModel.Resource r = TimelineModel.build(events, at(30), END).get(0);

        assertEquals(
                List.of(
                        new TimelineModel.Bar("agent-a", 5, at(30), at(30), at(90), TimelineModel.End.RENEWED),
                        new TimelineModel.Bar("agent-a", 5, at(90), at(200), at(200), TimelineModel.End.RELEASED)),
                r.bars());
    }

    @Test
    void aLapseThatNoRenewalEndedStaysLapsedUntilTheNextGrant() {
        List<LedgerEvent> events = List.of(
                lease(0, 1, EventType.GRANT, "agent-a", 5),
                lease(60, 2, EventType.EXPIRE, "agent-a", 5),
                lease(300, 3, EventType.GRANT, "agent-b", 6));

        TimelineModel.Bar a = TimelineModel.build(events, T0, END).get(0).bars().get(0);

        assertEquals(new TimelineModel.Bar("agent-a", 5, at(0), at(60), at(300), TimelineModel.End.EXPIRED), a);
    }
}
