package dev.fence.core;

/**
 * A grant the caller shows it holds: the token and the proof the grant returned. An acquire that shows
 * its holder's current grant may replace that holder's live lease ({@link LeaseService#acquire(String,
 * String, java.time.Duration, String, HeldGrant)}); in direct mode nothing else may.
 *
 * @param token the grant's token, positive
 * @param proof the proof the grant returned; never printed
 */
public record HeldGrant(long token, String proof) {
    public HeldGrant {
        if (token <= 0) {
            throw new IllegalArgumentException("token must be positive: " + token);
        }
        java.util.Objects.requireNonNull(proof, "proof");
    }

    /** The grant of {@code g}. */
    public static HeldGrant of(Grant g) {
        return new HeldGrant(g.token(), g.proof());
    }

    @Override
    public String toString() {
        return "HeldGrant[token=" + token + ", proof=(hidden)]";
    }
}
