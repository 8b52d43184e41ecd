package dev.fence.core;

import java.time.Instant;

/**
 * The most recent grant on a resource as the store keeps it.
 *
 * @param holder who it was granted to
 * @param token its fencing token
 * @param grantedAt when it was granted
 * @param expiresAt when it lapses unless renewed; a released lease has {@code expiresAt} = release time
 * @param released true once its holder released it
 * @param grantSha the remote branch tip recorded at grant (the lease's expected SHA), or null
 */
public record Lease(
        String holder, long token, Instant grantedAt, Instant expiresAt, boolean released, String grantSha) {
    /** True when the lease is held at {@code now}: not released and not yet expired. */
    public boolean isLive(Instant now) {
        return !released && now.isBefore(expiresAt);
    }
}
