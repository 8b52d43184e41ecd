package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class LeaseStandingTest {
    static final String R = "git:app:refs/heads/main";
    static final Instant T0 = Instant.parse("2026-11-29T14:00:00Z");
    static final String SHA = "a".repeat(40);

    static ResourceState state(long latest, Lease lease) {
        return new ResourceState(R, 1, latest, 0, lease, 0, null, null, null);
    }

    static Lease lease(String holder, long token, boolean released) {
        return new Lease(holder, token, T0, T0.plusSeconds(30), released, SHA);
    }

    /**
     * A store that started a new generation (its data lost or rolled back) may still hold the old state: the
     * lease there, live by its expiry and latest by its counter, holds nothing.
     */
    @Test
    void aLeaseOfAnOlderGenerationIsVoidWhateverItsStateSays() {
        var n = assertInstanceOf(
                LeaseStanding.NotHeld.class, LeaseStanding.of(state(7, lease("a", 7, false)), "a", 7, 100));
        assertEquals(Reason.OLD_GENERATION, n.fenced().reason());
        assertEquals(7, n.lastToken());
        assertNull(n.fenced().currentHolder());
        var status = new LeaseService.Status(state(7, lease("a", 7, false)), "g2", T0, 100);
        assertTrue(status.leaseVoid());
        assertNull(status.liveLease(), "a void lease is not live, whatever its expiry");
        assertInstanceOf(LeaseStanding.Holds.class, LeaseStanding.of(state(107, lease("a", 107, false)), "a", 0, 100));
    }

    @Test
    void theCurrentUnreleasedGrantIsHeldEvenAfterItLapsed() {
        var s = LeaseStanding.of(state(7, lease("a", 7, false)), "a", 0, 0);
        var h = assertInstanceOf(LeaseStanding.Holds.class, s);
        assertEquals(SHA, h.lease().grantSha());
        assertFalse(h.lapsed(T0.plusSeconds(29)));
        assertTrue(h.lapsed(T0.plusSeconds(30)));
    }

    @Test
    void anotherHoldersGrantSupersedesTheLastToken() {
        var s = LeaseStanding.of(state(8, lease("b", 8, false)), "a", 7, 0);
        var n = assertInstanceOf(LeaseStanding.NotHeld.class, s);
        assertEquals(7, n.lastToken());
        assertEquals(Reason.SUPERSEDED, n.fenced().reason());
        assertEquals(8, n.fenced().current());
        assertEquals("b", n.fenced().currentHolder());
        assertEquals("refs/heads/main", n.fenced().ref());
        assertTrue(FencedMessage.machineLine(n.fenced()).endsWith("token=7 current=8 reason=superseded"));
    }

    @Test
    void aBumpSupersedesTheHoldersOwnLease() {
        // The store keeps the lease record but the counter moved past it (a tokenless push bumped it).
        var n = assertInstanceOf(
                LeaseStanding.NotHeld.class, LeaseStanding.of(state(8, lease("a", 7, false)), "a", 0, 0));
        assertEquals(Reason.SUPERSEDED, n.fenced().reason());
        assertEquals(7, n.lastToken());
        assertNull(n.fenced().currentHolder());
        assertTrue(n.fenced().detail().contains("without a token"));
    }

    @Test
    void aReleasedLeaseIsNotHeld() {
        var n = assertInstanceOf(
                LeaseStanding.NotHeld.class, LeaseStanding.of(state(7, lease("a", 7, true)), "a", 7, 0));
        assertEquals(Reason.RELEASED, n.fenced().reason());
    }

    @Test
    void aHolderThatNeverHeldTheResourceIsNotTheHolder() {
        var n = assertInstanceOf(
                LeaseStanding.NotHeld.class, LeaseStanding.of(state(8, lease("b", 8, false)), "c", 0, 0));
        assertEquals(Reason.NOT_HOLDER, n.fenced().reason());
        assertEquals(0, n.lastToken());
        var empty = assertInstanceOf(
                LeaseStanding.NotHeld.class, LeaseStanding.of(ResourceState.empty("db/migrations"), "c", 0, 0));
        assertEquals(Reason.NOT_HOLDER, empty.fenced().reason());
        assertNull(empty.fenced().ref());
    }
}
