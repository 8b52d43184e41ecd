package dev.fence.core;

import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import java.time.Duration;

/**
 * The lease operations a client uses, wherever they run: {@link LeaseService} against a store (direct
 * mode), or a client of {@code fence serve} (server mode). Both give the same outcomes, so commands print
 * the same output and exit with the same codes either way.
 */
public interface LeaseOperations {
    /** See {@link LeaseService#acquire}. */
    AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha);

    /** See {@link LeaseService#renew}. */
    CheckOutcome renew(String resource, String holder, long token, String proof, Duration ttl);

    /** See {@link LeaseService#release}. */
    CheckOutcome release(String resource, String holder, long token, String proof);

    /** See {@link LeaseService#status}. */
    LeaseService.Status status(String resource);
}
