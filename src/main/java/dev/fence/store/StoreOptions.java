package dev.fence.store;

import java.time.Duration;

/**
 * Settings every store honours, read from the store URL's query string ({@code ?timeout=2s&retention=90d}).
 *
 * @param timeout longest wait for one store operation (connect, lock, reply) before {@link
 *     dev.fence.core.StoreUnavailableException}
 * @param retention the ledger retention asked for: used only by a store that has no retention setting yet
 *     (its first use); after that the store's own setting decides (events older than it may be dropped;
 *     counters and highs never are), whatever a client asks
 * @param retentionAsked true when the store URL named a retention ({@code ?retention=}): the store then
 *     refuses to serve unless that is its own setting, so that no client can shorten the shared ledger
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
        boolean callerClock,
        boolean retentionAsked) {

    /**
     * The fewest events past retention that a SQL store's write deletes when it appends (if that many are
     * past it); a write that appends more deletes up to {@value #PRUNE_PER_EVENT} per event it appends, so
     * a backlog always shrinks while the part of it that one verdict pays stays small.
     */
    public static final int PRUNE_MIN = 32;

    /** See {@link #PRUNE_MIN}. */
    public static final int PRUNE_PER_EVENT = 2;

    /** How many events past retention a write that appends {@code appended} events deletes at most. */
    public static int pruneBatch(int appended) {
        return Math.max(PRUNE_MIN, PRUNE_PER_EVENT * appended);
    }

    /** Options for a long-running process (pooled connections). */
    public StoreOptions(Duration timeout, Duration retention, int waitReplicas, Duration waitTimeout) {
        this(timeout, retention, waitReplicas, waitTimeout, false, false, false);
    }

    /** Options that open a single connection or a pool, as given. */
    public StoreOptions(
            Duration timeout, Duration retention, int waitReplicas, Duration waitTimeout, boolean singleConnection) {
        this(timeout, retention, waitReplicas, waitTimeout, singleConnection, false, false);
    }

    /** These options with {@link #singleConnection()} set as given. */
    public StoreOptions withSingleConnection(boolean single) {
        return new StoreOptions(timeout, retention, waitReplicas, waitTimeout, single, callerClock, retentionAsked);
    }

    /** These options with {@link #callerClock()} set: for tests whose fake clock must decide. */
    public StoreOptions withCallerClock() {
        return new StoreOptions(timeout, retention, waitReplicas, waitTimeout, singleConnection, true, retentionAsked);
    }

    /** These options asking the store for {@code asked} as its retention, as a URL's {@code ?retention=} does. */
    public StoreOptions withRetentionAsked(java.time.Duration asked) {
        return new StoreOptions(timeout, asked, waitReplicas, waitTimeout, singleConnection, callerClock, true);
    }

    /**
     * The retention as a store script or statement takes it: {@code url:<ms>} when asked for, else {@code
     * default:<ms>} (see {@link #retentionAsked()}).
     */
    public String retentionArgument() {
        return (retentionAsked ? "url:" : "default:") + Math.max(0, retention.toMillis());
    }

    /** Defaults: 2 s timeout, 90 days of ledger, no WAIT. */
    public static StoreOptions defaults() {
        return new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ofMillis(100));
    }
}
