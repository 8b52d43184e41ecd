package dev.fence.core;

import java.time.Instant;

/** What a store's acquire did: granted a new token, or found a live lease of another holder. */
public sealed interface AcquireResult {

    /**
     * A new lease. {@code previous} is the grant it replaced (lapsed, released or the same holder's), or
     * null; {@code tip} is the last admitted write.
     */
    record Granted(
            String resource,
            String holder,
            long token,
            String generation,
            Instant grantedAt,
            Instant expiresAt,
            Lease previous,
            Tip tip)
            implements AcquireResult {}

    /** Another holder's lease is live until {@code expiresAt}. Nothing was written. */
    record Busy(String resource, String holder, long token, Instant expiresAt) implements AcquireResult {}
}
