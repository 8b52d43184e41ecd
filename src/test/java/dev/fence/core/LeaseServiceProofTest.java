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
