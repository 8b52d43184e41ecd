package dev.fence.client;

import dev.fence.core.EventType;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.LeaseService.Status;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.Proofs;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * Leases straight from the store ("direct mode"). The harness holds store credentials, so it can issue
 * proofs itself: proofs stop goal-seeking agents that only read token numbers, not an operator who
 * holds the store's key.
 *
 * <p>Owns the store: {@link #close} closes it. Thread-safe if the store is.
 */
public final class DirectLeaseAccess implements LeaseAccess {
    private final LeaseStore store;
    private final LeaseService leases;

    public DirectLeaseAccess(LeaseStore store, Clock clock) {
        this.store = store;
        this.leases = new LeaseService(store, clock);
    }

    @Override
    public AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha) {
        return leases.acquire(resource, holder, ttl, grantSha);
    }

    @Override
    public CheckOutcome renew(String resource, String holder, long token, String proof, Duration ttl) {
        return leases.renew(resource, holder, token, proof, ttl);
    }

    @Override
    public CheckOutcome moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
        return leases.moveGrantSha(resource, holder, token, expectedSha, newSha);
    }

    @Override
    public Status status(String resource) {
        return leases.status(resource);
    }

    @Override
    public List<LedgerEvent> grantsTo(String holder, String resource, Instant since, int limit) {
        return store.query(new LedgerQuery(resource, null, null, holder, since, Set.of(EventType.GRANT), limit));
    }

    @Override
    public ProofOutcome proof(String resource, String holder, long token) {
        return new ProofOutcome.Issued(Proofs.standard().issue(leases.identity(), resource, token, holder));
    }

    @Override
    public void close() {
        store.close();
    }
}
