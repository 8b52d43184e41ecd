package dev.fence.core;

/** The hook's decision on one ref update. Decisions are values; a push is accepted only if none is {@link Refused}. */
public sealed interface RefDecision {
    RefUpdate update();

    /** The ref is outside the fenced patterns: not judged, not recorded. */
    record Untouched(RefUpdate update) implements RefDecision {}

    /**
     * The update may proceed.
     *
     * @param reason {@link Reason#ACCEPTED}, {@link Reason#BUMPED} or {@link Reason#ALLOWED}
     * @param token the presented token, or for a bump the token the counter was bumped to
     * @param warning a line to show the pusher, or null
     */
    record Admitted(RefUpdate update, String resource, Reason reason, long token, String warning)
            implements RefDecision {}

    /** The update is refused; {@code fenced} says why in the FENCED format. */
    record Refused(RefUpdate update, Fenced fenced) implements RefDecision {}
}
