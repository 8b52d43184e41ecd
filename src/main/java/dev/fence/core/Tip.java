package dev.fence.core;

import java.time.Instant;

/**
 * The last write fence admitted to a ref.
 *
 * @param sha the new tip (the zero id after a delete)
 * @param token the token it was written under, or 0 for a tokenless push
 * @param holder the lease holder of that token, or null for a tokenless push
 * @param pusher the git host's pusher identity
 * @param at when the hook admitted it
 */
public record Tip(String sha, long token, String holder, String pusher, Instant at) {}
