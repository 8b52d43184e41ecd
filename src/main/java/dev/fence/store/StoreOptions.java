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
 * @param singleConnection for a process that makes a few calls and exits (a hook): Redis opens one
 *     plain connection on first use instead of a pool (cheaper to start); not a URL option
 * @param callerClock for tests only, never from a URL: a store with a clock of its own (Redis) takes the
 *     times its callers pass ({@code now}) instead of its own, so that a test's fake clock decides expiry.
 *     Off, the store's clock decides lease expiry, ledger times and retention, whatever a client's clock
 *     says
 */
public record StoreOptions(
        Duration timeout,
        Duration retention,
        int waitReplicas,
        Duration waitTimeout,
        boolean singleConnection,
        boolean callerClock) {

    /** Options for a long-running process (pooled connections). */
    public StoreOptions(Duration timeout, Duration retention, int waitReplicas, Duration waitTimeout) {
        this(timeout, retention, waitReplicas, waitTimeout, false, false);
    }

    /** Options that open a single connection or a pool, as given. */
    public StoreOptions(
            Duration timeout, Duration retention, int waitReplicas, Duration waitTimeout, boolean singleConnection) {
        this(timeout, retention, waitReplicas, waitTimeout, singleConnection, false);
    }

    /** These options with {@link #singleConnection()} set as given. */
    public StoreOptions withSingleConnection(boolean single) {
        return new StoreOptions(timeout, retention, waitReplicas, waitTimeout, single, callerClock);
    }

    /** These options with {@link #callerClock()} set: for tests whose fake clock must decide. */
    public StoreOptions withCallerClock() {
        return new StoreOptions(timeout, retention, waitReplicas, waitTimeout, singleConnection, true);
    }

    /** Defaults: 2 s timeout, 90 days of ledger, no WAIT. */
    public static StoreOptions defaults() {
        return new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ofMillis(100));
    }
}
