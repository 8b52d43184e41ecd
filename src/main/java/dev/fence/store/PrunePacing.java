package dev.fence.store;

import java.util.concurrent.atomic.AtomicLong;

/**
 * When a SQL store's write looks for ledger events past retention. Every write that appends events may
 * delete a bounded batch of them ({@link StoreOptions#pruneBatch}); once a write finds less than a full
 * batch there is no backlog, and the writes of the next {@link #PAUSE_MILLIS} of the store's clock skip the
 * look (its read of the retention setting and its delete). A busy server appends thousands of events a
 * second, and on every verdict the look cost as much as the verdict's own writes; with the pause, at most
 * that much of the ledger's history comes of age before the next look. A full batch (a backlog) ends no
 * pause, so a backlog still drains at every write.
 *
 * <p>One per store instance; thread-safe. Times are the store's clock (or a test's, under {@link
 * StoreOptions#callerClock()}), in epoch milliseconds.
 */
public final class PrunePacing {
    /** How long writes skip looking for events past retention after a look found no backlog. */
    public static final long PAUSE_MILLIS = 1000;

    private final AtomicLong quietUntil = new AtomicLong(Long.MIN_VALUE);

    /**
     * True when a write at {@code nowMillis} looks for events past retention: once the pause is over, or
     * when the clock has gone back to before the look that began it (a clock that was set far ahead and
     * then corrected must not pause the look for as long).
     */
    public boolean due(long nowMillis) {
        long until = quietUntil.get();
        return nowMillis >= until || until != Long.MIN_VALUE && nowMillis < until - PAUSE_MILLIS;
    }

    /** A write at {@code nowMillis} deleted {@code deleted} of at most {@code batch} events past retention. */
    public void looked(long nowMillis, long deleted, int batch) {
        quietUntil.set(deleted < batch ? nowMillis + PAUSE_MILLIS : Long.MIN_VALUE);
    }

    /** The retention changed: the next write looks. */
    public void reset() {
        quietUntil.set(Long.MIN_VALUE);
    }
}
