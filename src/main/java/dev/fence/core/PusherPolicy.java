package dev.fence.core;

import java.util.Locale;

/** What a push to a fenced ref without {@code fence=} gets (design §4). */
public enum PusherPolicy {
    /**
     * Accept creations and fast-forwards and bump the resource's counter so every outstanding token is
     * stale; refuse a rewrite or delete that would discard commits written under a token.
     */
    BUMP,
    /** As {@link #BUMP}, and also accept such rewrites and deletes (still bumping). */
    BUMP_FORCE,
    /** Refuse every tokenless push. */
    REJECT,
    /** Accept without bumping (trusted automation that must not disturb leases). */
    ALLOW;

    /** The configuration spelling: {@code bump}, {@code bump-force}, {@code reject}, {@code allow}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Parses {@link #label()}.
     *
     * @throws ConfigException for an unknown policy
     */
    public static PusherPolicy parse(String key, String text) {
        for (PusherPolicy p : values()) {
            if (p.label().equals(text.trim())) {
                return p;
            }
        }
        throw new ConfigException(
                key + ": unknown pusher policy '" + text + "' (expected bump, bump-force, reject or allow)");
    }
}
