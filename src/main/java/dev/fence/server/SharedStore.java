package dev.fence.server;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ResourceState;
import dev.fence.core.StoreIdentity;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The server's one store, handed to code that closes what it opens (the hooks): {@link #close()} does
 * nothing; the server closes the real store when it stops.
 */
final class SharedStore implements LeaseStore {
    private final LeaseStore store;

    SharedStore(LeaseStore store) {
        this.store = store;
    }

    @Override
    public StoreIdentity identity(StoreIdentity candidate) {
        return store.identity(candidate);
    }

    @Override
    public AcquireResult acquire(
            String resource,
            String holder,
            long ttlMillis,
            Instant now,
            String grantSha,
            long ownToken,
            java.util.function.Supplier<StoreIdentity> candidate) {
        return store.acquire(resource, holder, ttlMillis, now, grantSha, ownToken, candidate);
    }

    @Override
    public LeaseCheck renew(String resource, String holder, long token, long ttlMillis, Instant now) {
        return store.renew(resource, holder, token, ttlMillis, now);
    }

    @Override
    public LeaseCheck release(String resource, String holder, long token, Instant now) {
        return store.release(resource, holder, token, now);
    }

    @Override
    public LeaseCheck moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
        return store.moveGrantSha(resource, holder, token, expectedSha, newSha);
    }

    @Override
    public Map<String, ResourceState> snapshot(Collection<String> resources) {
        return store.snapshot(resources);
    }

    @Override
    public Optional<Instant> now() {
        return store.now();
    }

    @Override
    public StoreIdentity identityOf(String generation, java.util.function.Supplier<StoreIdentity> candidate) {
        return store.identityOf(generation, candidate);
    }

    @Override
    public IdentifiedSnapshot identityAndSnapshot(
            Collection<String> resources, java.util.function.Supplier<StoreIdentity> candidate) {
        return store.identityAndSnapshot(resources, candidate);
    }

    @Override
    public CommitResult commit(List<dev.fence.core.ResourceWrite> writes, List<LedgerEvent> events) {
        return store.commit(writes, events);
    }

    @Override
    public void append(List<LedgerEvent> events) {
        store.append(events);
    }

    @Override
    public java.time.Duration retention(
            java.time.Duration newRetention,
            String changedBy,
            java.time.Instant now,
            java.util.function.Supplier<StoreIdentity> candidate) {
        return store.retention(newRetention, changedBy, now, candidate);
    }

    @Override
    public List<LedgerEvent> query(LedgerQuery query) {
        return store.query(query);
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        // The server owns the store.
    }
}
