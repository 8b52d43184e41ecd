package dev.fence.core;

import java.time.Instant;

/**
 * Whether a holder still holds a resource, judged from the store's state alone: the question {@code
 * fence push}, the pre-push guard and {@code fence status} ask before they act.
 *
 * <p>A holder holds a resource while the resource's latest grant is its own and not released. That
 * includes a lease that has lapsed but that no one has taken since: the hook judges tokens, not clocks,
 * so such a lease can still write and be renewed. Callers that care about lapse check {@link
 * Holds#lapsed}.
 */
public sealed interface LeaseStanding {

    /** The resource. */
    String resource();

    /**
     * The holder's lease is the resource's current grant.
     *
     * @param lease the lease (holder, token, expiry, recorded SHA)
     * @param tip the last admitted write, or null
     */
    record Holds(String resource, Lease lease, Tip tip) implements LeaseStanding {
        /** True when the lease's time ran out at {@code now} (still current: no one took it since). */
        public boolean lapsed(Instant now) {
            return !lease.isLive(now);
        }
    }

    /**
     * The holder does not hold the resource.
     *
     * @param lastToken the holder's most recent token on the resource, or 0 when it never held it
     * @param fenced what to tell the holder, in the FENCED format
     */
    record NotHeld(String resource, long lastToken, Fenced fenced) implements LeaseStanding {}

    /**
     * Judges {@code holder}'s standing on a resource.
     *
     * @param state the resource's state
     * @param holder the holder asking
     * @param lastToken the holder's most recent token on the resource as the ledger knows it, or 0 when
     *     unknown; used only to word the answer when the latest grant is someone else's
     * @param floor the store's current generation's floor (tokens at or below it are void), or 0
     */
    static LeaseStanding of(ResourceState state, String holder, long lastToken, long floor) {
        String resource = state.resource();
        Lease lease = state.lease();
        boolean leaseIsLatest = lease != null && lease.token() == state.latestGranted() && lease.token() > floor;
        if (leaseIsLatest && lease.holder().equals(holder) && !lease.released()) {
            return new Holds(resource, lease, state.tip());
        }
        long token = lease != null && lease.holder().equals(holder) ? Math.max(lease.token(), lastToken) : lastToken;
        String currentHolder = leaseIsLatest && !lease.holder().equals(holder) ? lease.holder() : null;
        Reason reason;
        String detail = null;
        if (token != Tokens.NONE && token <= floor) {
            // The store started a new generation (it lost or rolled back data): whatever the old state
            // still says, that grant holds nothing, and the counter beside it may be the same old number.
            reason = Reason.OLD_GENERATION;
            detail = "the store started a new generation after token " + token + " was granted (its data was lost"
                    + " or rolled back); acquire again";
        } else if (token == Tokens.NONE) {
            reason = Reason.NOT_HOLDER;
            detail = holder + " has no lease on " + resource + " (never granted, or too long ago to be in the ledger)";
        } else if (token < state.latestGranted()) {
            reason = Reason.SUPERSEDED;
            if (!leaseIsLatest) {
                detail = "token " + state.latestGranted() + " was taken by a push without a token (a bump)";
            }
        } else if (leaseIsLatest && lease.released()) {
            reason = Reason.RELEASED;
        } else {
            reason = Reason.NOT_HOLDER;
        }
        String ref = Resources.parse(resource).map(Resources.GitRef::ref).orElse(null);
        Fenced f = new Fenced(resource, ref, token, state.latestGranted(), reason, currentHolder, state.tip(), detail);
        return new NotHeld(resource, token, f);
    }
}
