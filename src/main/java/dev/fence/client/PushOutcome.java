package dev.fence.client;

import java.util.List;

/**
 * What {@link FencedPush} did. Every outcome names the resource, the holder's token (0 when it holds
 * none), the expected old id the lease recorded and the local tip it pushed (or would have pushed).
 * Never carries the proof.
 */
public sealed interface PushOutcome {
    String resource();

    String ref();

    long token();

    /** The lease's recorded SHA (the expected old id), or null when the push was not attempted. */
    String oldSha();

    /** The local tip, or null when the push was not attempted. */
    String newSha();

    /** What to show the holder, one entry per line. */
    List<String> lines();

    /**
     * The ref now holds {@code newSha}.
     *
     * @param upToDate the remote already held it; nothing was sent
     * @param withOptions the push carried {@code fence=} and {@code fence-proof=} (the remote takes push
     *     options); false for remotes without push options, where the expected old id alone fences
     * @param grantShaMoved the lease's recorded SHA now is {@code newSha}; false when the lease was lost
     *     meanwhile ({@code lines} says so)
     */
    record Pushed(
            String resource,
            String ref,
            long token,
            String oldSha,
            String newSha,
            boolean upToDate,
            boolean withOptions,
            boolean grantShaMoved,
            List<String> lines)
            implements PushOutcome {}

    /**
     * FENCED: the holder does not hold the resource, the remote moved since the lease recorded it, or
     * the remote's hook refused the token. {@code lines} is the FENCED message (machine line first).
     *
     * @param attempted the push reached the remote (false when the store already said no)
     */
    record Fenced(
            String resource,
            String ref,
            long token,
            String oldSha,
            String newSha,
            boolean attempted,
            List<String> lines)
            implements PushOutcome {}

    /**
     * The remote refused for another reason, or could not be reached.
     *
     * @param status the ref update's outcome as {@code git push --porcelain} reported it ({@code
     *     REJECTED_NONFASTFORWARD}, {@code REJECTED_OTHER_REASON}, ...), or {@code TRANSPORT_ERROR}
     */
    record Rejected(
            String resource, String ref, long token, String oldSha, String newSha, String status, List<String> lines)
            implements PushOutcome {}
}
