package dev.fence.client;

import dev.fence.core.Fenced;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.LeaseService.Status;
import dev.fence.core.LeaseStanding;
import dev.fence.core.LedgerEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * How the agent side reaches leases: {@link DirectLeaseAccess} talks to the store with the harness's
 * store credentials; the server-mode implementation ({@code --server URL}, {@code
 * dev.fence.server.client.RemoteLeaseAccess}) talks to {@code fence serve} instead, so that store
 * credentials and the proof key stay on the server.
 *
 * <p>Implementations are thread-safe: {@link LeaseKeeper} renews from a scheduler thread.
 */
public interface LeaseAccess extends AutoCloseable {

    /** As {@link dev.fence.core.LeaseService#acquire}. */
    AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha);

    /** As {@link dev.fence.core.LeaseService#renew}. */
    CheckOutcome renew(String resource, String holder, long token, String proof, Duration ttl);

    /** As {@link dev.fence.core.LeaseService#moveGrantSha}. */
    CheckOutcome moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha);

    /** As {@link dev.fence.core.LeaseService#status}. */
    Status status(String resource);

    /**
     * The {@code GRANT} events of {@code holder}, oldest first.
     *
     * @param resource only this resource, or null for all
     * @param since only events at or after this instant, or null
     * @param limit only the newest this many, or 0 for all
     */
    List<LedgerEvent> grantsTo(String holder, String resource, Instant since, int limit);

    /**
     * The proof a push under {@code token} carries. Only for the holder of the current grant: callers
     * check {@link #standing} first. Never print it.
     *
     * @return the proof, or {@link ProofOutcome.Lost} when {@code holder} no longer holds that grant (a
     *     server checks; direct mode issues the proof without asking the store)
     */
    ProofOutcome proof(String resource, String holder, long token);

    /** What {@link #proof} gives. */
    sealed interface ProofOutcome {
        /** The proof of the grant. Never print it. */
        record Issued(String proof) implements ProofOutcome {
            @Override
            public String toString() {
                return "Issued[proof hidden]";
            }
        }

        /** The holder no longer holds that grant: FENCED. */
        record Lost(Fenced fenced) implements ProofOutcome {}
    }

    /** Whether {@code holder} holds {@code resource} now, worded for a FENCED message when it does not. */
    default LeaseStanding standing(String resource, String holder) {
        Status status = status(resource);
        List<LedgerEvent> grants = grantsTo(holder, resource, null, 1);
        long lastToken = grants.isEmpty() ? 0 : grants.get(grants.size() - 1).token();
        return LeaseStanding.of(status.state(), holder, lastToken);
    }

    /** Releases connections; never throws. */
    @Override
    void close();
}
