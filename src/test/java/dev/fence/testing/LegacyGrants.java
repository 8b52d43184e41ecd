package dev.fence.testing;

import dev.fence.core.AcquireResult;
import dev.fence.core.Identities;
import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.time.Instant;

/**
 * Grants recorded as an older fence recorded them, before a new grant's holder had to be one plain word
 * ({@code Names.requireHolder}): a store in use may hold such names, and every reader of the ledger must
 * still show them safely.
 */
public final class LegacyGrants {
    private LegacyGrants() {}

    /** Grants {@code resource} to {@code holder} for 30 s in the store at {@code storeUrl}, past the service. */
    public static void grant(String storeUrl, String resource, String holder) {
        try (LeaseStore s = Stores.open(storeUrl, StoreOptions.defaults())) {
            Instant now = Instant.now();
            AcquireResult r = s.acquire(resource, holder, 30_000, now, null, () -> Identities.candidate(now));
            if (!(r instanceof AcquireResult.Granted)) {
                throw new IllegalStateException(resource + " is busy: " + r);
            }
        }
    }
}
