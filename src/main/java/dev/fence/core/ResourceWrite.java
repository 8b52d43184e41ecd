package dev.fence.core;

/**
 * A compare-and-set of one resource's admission state, computed by the core and applied verbatim by the
 * store inside {@link LeaseStore#commit}. The store holds no admission logic of its own.
 *
 * @param resource the resource
 * @param expectedVersion applied only if the stored version still equals this
 * @param latestGranted new counter value; never lower than the stored one
 * @param highestAccepted new highest accepted token; never lower than the stored one
 * @param clearLease true to drop the current lease (a bump supersedes it)
 * @param baseToken new base token
 * @param baseSha new base sha
 * @param lastTokenWriteSha new last token-written tip (null clears it)
 * @param tip new last write
 * @param generation the store generation the write was decided under: the store applies it only while
 *     that generation is current, so a decision made before a rollback was noticed is never written after
 */
public record ResourceWrite(
        String resource,
        long expectedVersion,
        long latestGranted,
        long highestAccepted,
        boolean clearLease,
        long baseToken,
        String baseSha,
        String lastTokenWriteSha,
        Tip tip,
        String generation) {

    /**
     * A write that leaves {@code s} as it is but for its tip: a compare-and-set on the state's own version
     * (a check that the store writes, or a repair of the last write's record).
     */
    public static ResourceWrite keeping(ResourceState s, Tip tip, String generation) {
        return keeping(s, s.lastTokenWriteSha(), tip, generation);
    }

    /**
     * As {@link #keeping(ResourceState, Tip, String)}, with {@code lastTokenWriteSha} as the last token-written
     * tip (a landing's record of its own write).
     */
    public static ResourceWrite keeping(ResourceState s, String lastTokenWriteSha, Tip tip, String generation) {
        return new ResourceWrite(
                s.resource(),
                s.version(),
                s.latestGranted(),
                s.highestAccepted(),
                false,
                s.baseToken(),
                s.baseSha(),
                lastTokenWriteSha,
                tip,
                generation);
    }
}
