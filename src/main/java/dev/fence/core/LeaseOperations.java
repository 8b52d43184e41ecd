package dev.fence.core;

import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.LeaseService.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The one lease port: every command and the agent-side client code reach leases through it, whichever
 * way they run. {@link LeaseService} is the direct implementation (on a store, with the harness holding
 * store credentials); {@code dev.fence.server.client.RemoteLeases} talks to {@code fence serve} ({@code
 * --server URL}), so store credentials and the proof key stay on the server. Both give the same outcomes,
 * so commands print the same output and exit with the same codes either way.
 *
 * <p>Implementations are thread-safe: a lease keeper renews from a scheduler thread.
 */
public interface LeaseOperations extends AutoCloseable {
    /** As {@link #acquire(String, String, Duration, String, HeldGrant)}, showing no grant. */
    default AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha) {
        return acquire(resource, holder, ttl, grantSha, null);
    }

    /** See {@link LeaseService#acquire(String, String, Duration, String, HeldGrant)}. */
    AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha, HeldGrant held);

    /** See {@link LeaseService#renew}. */
    CheckOutcome renew(String resource, String holder, long token, String proof, Duration ttl);

    /** See {@link LeaseService#release}. */
    CheckOutcome release(String resource, String holder, long token, String proof);

    /** See {@link LeaseService#moveGrantSha}. */
    CheckOutcome moveGrantSha(
            String resource, String holder, long token, String proof, String expectedSha, String newSha);

    /**
     * Why {@code proof} does not show the grant {@code (resource, holder, token)}, or null when it does.
     * Where the port authenticates holders ({@link #holderAuthenticated}) the caller has shown it is the
     * holder, and a null proof passes.
     *
     * @throws InvalidInputException for a malformed proof, or without one in direct mode
     */
    Fenced checkProof(String resource, String holder, long token, String proof);

    /** See {@link LeaseService#status}. */
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
     * The proof a push under {@code token} carries, for the holder of the resource's current, unreleased
     * grant only, and only where the other side has authenticated the caller as that holder ({@link
     * #holderAuthenticated}). Never print it.
     *
     * @return the proof, or {@link ProofOutcome.Lost} when {@code (holder, token)} is not that grant
     * @throws InvalidInputException where the holder is not authenticated (direct mode): there only the
     *     proof the grant returned shows that a call is the holder's, and no door may mint one for a name
     */
    ProofOutcome proof(String resource, String holder, long token);

    /** What {@link #proof} gives. */
    sealed interface ProofOutcome {
        /**
         * The proof of the grant. Never print it.
         *
         * @param generation the store generation the proof belongs to
         */
        record Issued(String proof, String generation) implements ProofOutcome {
            @Override
            public String toString() {
                return "Issued[proof hidden, generation=" + generation + "]";
            }
        }

        /** The holder no longer holds that grant: FENCED. */
        record Lost(Fenced fenced) implements ProofOutcome {}
    }

    /**
     * True when the other side has authenticated the caller as the holder it names (fence serve, with an
     * agent credential bound to its holders): a call may then name the holder's token without its proof,
     * and {@link #proof} hands out the proof of the caller's own grant. False in direct mode, where a
     * holder's name and token are public (a FENCED message, the ledger), only the proof its grant
     * returned shows that a call is the holder's, and {@link #proof} refuses.
     */
    default boolean holderAuthenticated() {
        return false;
    }

    /** Whether {@code holder} holds {@code resource} now, worded for a FENCED message when it does not. */
    default LeaseStanding standing(String resource, String holder) {
        Status status = status(resource);
        List<LedgerEvent> grants = grantsTo(holder, resource, null, 1);
        long lastToken = grants.isEmpty() ? 0 : grants.get(grants.size() - 1).token();
        return LeaseStanding.of(status.state(), holder, lastToken, status.floor());
    }

    /** Releases what the implementation holds (the store, in direct mode); never throws. */
    @Override
    void close();
}
