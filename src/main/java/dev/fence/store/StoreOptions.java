package dev.fence.store;

import java.time.Duration;

/**
 * Settings every store honours, read from the store URL's query string ({@code ?timeout=2s&retention=90d}).
 *
 * @param timeout longest wait for one store operation (connect, lock, reply) before {@link
 *     dev.fence.core.StoreUnavailableException}
 * @param retention ledger events older than this may be dropped; counters and highs never are
 * @param waitReplicas Redis only: after a write, {@code WAIT} for this many replicas (0 = don't)
 * @param waitTimeout Redis only: the {@code WAIT} timeout
 */
public record StoreOptions(Duration timeout, Duration retention, int waitReplicas, Duration waitTimeout) {
    /** Defaults: 2 s timeout, 90 days of ledger, no WAIT. */
    public static StoreOptions defaults() {
        return new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ofMillis(100));
    }
}
