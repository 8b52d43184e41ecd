package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.store.StoreOptions;
import dev.fence.store.sqlite.SqliteLeaseStore;
import dev.fence.testing.FakeClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may be handed a grant's proof: only a caller whose door authenticated the holder ({@code fence
 * serve}). In direct mode a holder's name and token are public, so the service refuses to issue a proof
 * for a named holder, whatever the caller.
 */
class LeaseServiceProofTest {
    static final String R = "db/migrations";
    static final Duration TTL = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    FakeClock clock;
    LeaseService direct;
    LeaseService authenticated;
    Grant grant;

    @BeforeEach
    void setUp() {
        clock = new FakeClock(Instant.parse("2026-11-29T14:00:00Z"));
        Path db = tmp.resolve("fence.db");
        direct = new LeaseService(SqliteLeaseStore.open(db, StoreOptions.defaults()), clock);
        authenticated = LeaseService.forAuthenticatedHolders(SqliteLeaseStore.open(db, StoreOptions.defaults()), clock);
        grant = ((AcquireOutcome.Acquired) direct.acquire(R, "agent-a", TTL, null)).grant();
    }

    @AfterEach
    void tearDown() {
        direct.close();
        authenticated.close();
    }

    /**
     * A new grant replaces its holder's live lease, and a FENCED message prints the holder's name: in direct
     * mode, where a name is no identity, only the live grant's proof may take it again.
     */
    @Test
    void directModeTakesAHoldersLiveLeaseAgainOnlyUnderItsGrant() {
        for (HeldGrant shown : new HeldGrant[] {
            null, new HeldGrant(grant.token(), "p1.forged"), new HeldGrant(grant.token() + 1, grant.proof()),
        }) {
            AcquireOutcome.Busy busy = assertInstanceOf(
                    AcquireOutcome.Busy.class, direct.acquire(R, "agent-a", TTL, null, shown), String.valueOf(shown));
            assertEquals("agent-a", busy.holder());
            assertEquals(grant.expiresAt(), busy.expiresAt());
        }
        // Another holder's valid grant on the same resource shows nothing about agent-a's lease.
        Grant other = ((AcquireOutcome.Acquired) direct.acquire("db/other", "agent-b", TTL, null)).grant();
        assertInstanceOf(AcquireOutcome.Busy.class, direct.acquire(R, "agent-a", TTL, null, HeldGrant.of(other)));
        assertEquals(grant.token(), direct.status(R).liveLease().token(), "the holder's lease is untouched");

        Grant again = assertInstanceOf(
                        AcquireOutcome.Acquired.class, direct.acquire(R, "agent-a", TTL, null, HeldGrant.of(grant)))
                .grant();
        assertTrue(again.token() > grant.token());
        // The grant it replaced shows nothing any more.
        assertInstanceOf(AcquireOutcome.Busy.class, direct.acquire(R, "agent-a", TTL, null, HeldGrant.of(grant)));
        // Where a door authenticated the holder, its acquire takes its own lease again without a grant shown.
        Grant third = assertInstanceOf(AcquireOutcome.Acquired.class, authenticated.acquire(R, "agent-a", TTL, null))
                .grant();
        assertTrue(third.token() > again.token());
        // Once the lease lapsed, anyone may take it, the holder included, with no grant shown.
        clock.set(third.expiresAt());
        assertInstanceOf(AcquireOutcome.Acquired.class, direct.acquire(R, "agent-a", TTL, null));
    }

    @Test
    void directModeIssuesNoProofEvenForTheCurrentHolder() {
        InvalidInputException refused =
                assertThrows(InvalidInputException.class, () -> direct.proof(R, "agent-a", grant.token()));
        assertTrue(refused.getMessage().contains("needs the proof its grant returned"), refused.getMessage());
        assertTrue(refused.getMessage().contains("agent-a"), refused.getMessage());

        // Nothing was issued that would keep the lease alive: it lapses on its own clock.
        clock.advance(TTL.plusSeconds(1));
        assertNull(direct.status(R).liveLease(), "the lease lapsed untouched");
    }

    @Test
    void anAuthenticatedDoorStillGetsTheProofOfTheCurrentGrantOnly() {
        var issued = assertInstanceOf(
                LeaseOperations.ProofOutcome.Issued.class, authenticated.proof(R, "agent-a", grant.token()));
        assertEquals(grant.proof(), issued.proof(), "the same proof the grant returned");
        assertInstanceOf(CheckOutcome.Current.class, direct.renew(R, "agent-a", grant.token(), issued.proof(), TTL));

        clock.advance(TTL.plusSeconds(1));
        Grant b = ((AcquireOutcome.Acquired) direct.acquire(R, "agent-b", TTL, null)).grant();
        var lost = assertInstanceOf(
                LeaseOperations.ProofOutcome.Lost.class, authenticated.proof(R, "agent-a", grant.token()));
        assertEquals(Reason.SUPERSEDED, lost.fenced().reason());
        assertEquals(b.token(), lost.fenced().current());
    }
}
