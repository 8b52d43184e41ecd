package dev.fence.core;

import java.time.Instant;
import java.util.Arrays;

/**
 * Who a store is: its generation and the secret it signs proofs with.
 *
 * <p>A generation is created when a store is initialised and is replaced whenever the store finds its
 * own data gone (a Redis restarted without persistence, a deleted SQLite file). Tokens and proofs are
 * bound to the generation, so nothing issued before a loss is honoured after it. Every generation
 * starts its counters at {@code floor}, the creation time in epoch microseconds ({@link #floorAt}), so
 * tokens issued after a loss are larger than any token the lost generation issued unless it issued more
 * than one grant per microsecond of its life on a single resource, which no store can: each grant of a
 * resource is a store transaction of its own, and those take longer. (Floors in milliseconds were
 * outrun by a client granting one resource faster than once a millisecond.)
 *
 * @param generation opaque, URL-safe id of this generation
 * @param floor tokens of this generation are strictly greater than this
 * @param proofKey the HMAC key; never printed, logged or returned by any API
 * @param createdAt when the generation was created
 */
public record StoreIdentity(String generation, long floor, byte[] proofKey, Instant createdAt) {
    /** The floor of a generation created at {@code epochMillis}: that time in microseconds. */
    public static long floorAt(long epochMillis) {
        return Math.multiplyExact(epochMillis, 1000L);
    }

    /**
     * The token of a grant (or bump) of a resource whose counter is {@code latestGranted}, made at {@code
     * nowMillis} by the store's clock: above the counter, above the floor, and above the grant's own time
     * in microseconds. The last term is what keeps a token from being issued twice when a store forgets
     * grants without noticing, so without a new generation (a Redis key evicted, an older snapshot loaded in
     * place, a SQLite log deleted, a database that acknowledged commits it had not written): the counter it
     * restarts from is behind, but a grant made later is still above every grant made before, and so is
     * its proof different. One exception, the same as the floor's: more than one grant of a resource per
     * microsecond, which no store makes.
     *
     * @throws ArithmeticException past {@code Long.MAX_VALUE}
     */
    public long nextToken(long latestGranted, long nowMillis) {
        return Math.addExact(Math.max(Math.max(latestGranted, floor), floorAt(Math.max(0, nowMillis))), 1);
    }

    public StoreIdentity {
        proofKey = proofKey.clone();
    }

    @Override
    public byte[] proofKey() {
        return proofKey.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoreIdentity other
                && generation.equals(other.generation)
                && floor == other.floor
                && Arrays.equals(proofKey, other.proofKey)
                && createdAt.equals(other.createdAt);
    }

    @Override
    public int hashCode() {
        return generation.hashCode();
    }

    @Override
    public String toString() {
        return "StoreIdentity[generation=" + generation + ", floor=" + floor + ", createdAt=" + createdAt + "]";
    }
}
