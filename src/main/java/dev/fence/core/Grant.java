package dev.fence.core;

import java.time.Instant;

/**
 * A lease granted by {@link LeaseService#acquire}: the token and the proof a push must carry.
 *
 * <p>Canonical usage by a harness:
 *
 * <pre>{@code
 * Grant g = leases.acquire(resource, "agent-a", Duration.ofSeconds(30), null);
 * // git push -o fence=<g.token()> -o fence-proof=<g.proof()> ...
 * // renew between tool calls; on FENCED: stop, re-read, re-plan
 * }</pre>
 *
 * @param resource the resource
 * @param holder the holder it was granted to
 * @param token the fencing token, strictly greater than every earlier token of the resource
 * @param proof the proof of this grant; secret: never print it in human output or logs
 * @param generation the store generation the token belongs to
 * @param grantedAt grant time
 * @param expiresAt the lease lapses then unless renewed
 * @param grantSha the remote tip recorded at grant, or null
 * @param previous the grant this one follows (lapsed, released or superseded), or null
 * @param tip the last write fence admitted to the resource, or null
 */
public record Grant(
        String resource,
        String holder,
        long token,
        String proof,
        String generation,
        Instant grantedAt,
        Instant expiresAt,
        String grantSha,
        Lease previous,
        Tip tip) {

    /**
     * How {@link #previous()} ended, as messages say it: {@code released}, {@code lapsed <its expiry>}, or,
     * for a lease still live when this one was granted (its holder acquired again), {@code replaced by this
     * grant at <grant time>}. Null when there is no previous lease.
     */
    public String previousEnded() {
        if (previous == null) {
            return null;
        }
        if (previous.released()) {
            return "released";
        }
        if (previous.expiresAt().isAfter(grantedAt)) {
            return "replaced by this grant at " + grantedAt;
        }
        return "lapsed " + previous.expiresAt();
    }

    @Override
    public String toString() {
        return "Grant[resource=" + resource + ", holder=" + holder + ", token=" + token + ", proof=(hidden)"
                + ", generation=" + generation + ", expiresAt=" + expiresAt + "]";
    }
}
