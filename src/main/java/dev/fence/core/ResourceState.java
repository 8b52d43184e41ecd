package dev.fence.core;

/**
 * Everything the store keeps about one resource, read in one consistent snapshot.
 *
 * <p>All token fields are 0 ({@link Tokens#NONE}) until first set. {@code version} starts at 0 for a
 * resource the store has never seen and grows by one with every change that can affect admission (a
 * grant, an admitted push, a bump); renewals and releases leave it unchanged.
 *
 * @param resource the resource name
 * @param version optimistic-concurrency version, see {@link LeaseStore#commit}
 * @param latestGranted the resource's counter: the newest token granted (or bumped to)
 * @param highestAccepted the highest token a push to this resource was admitted with
 * @param lease the most recent grant, live or not; null when none or after a bump
 * @param baseToken the token that {@code baseSha} belongs to
 * @param baseSha the ref's tip when {@code baseToken} first wrote to it (the zero id when it created the
 *     ref)
 * @param lastTokenWriteSha the tip after the most recent push admitted with a token, or null
 * @param tip the most recent admitted write, or null
 */
public record ResourceState(
        String resource,
        long version,
        long latestGranted,
        long highestAccepted,
        Lease lease,
        long baseToken,
        String baseSha,
        String lastTokenWriteSha,
        Tip tip) {

    /**
     * True when {@code (holder, token)} is the current grant, as the store contract defines it for renew,
     * release and moving the recorded SHA: the counter is this token and the latest lease is it, unreleased.
     */
    public boolean isCurrentGrant(String holder, long token) {
        return lease != null
                && latestGranted == token
                && lease.token() == token
                && lease.holder().equals(holder)
                && !lease.released();
    }

    /** This state with {@code lease} as its latest grant. */
    public ResourceState withLease(Lease lease) {
        return new ResourceState(
                resource, version, latestGranted, highestAccepted, lease, baseToken, baseSha, lastTokenWriteSha, tip);
    }

    /** The state of a resource the store has never seen. */
    public static ResourceState empty(String resource) {
        return new ResourceState(resource, 0, 0, 0, null, 0, null, null, null);
    }
}
