package dev.fence.testing;

import dev.fence.client.Scheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** A {@link Scheduler} driven by a {@link FakeClock}: tasks run only in {@link #runDue()}. Thread-safe. */
public final class ManualScheduler implements Scheduler {
    private final FakeClock clock;
    private final List<Entry> entries = new ArrayList<>();

    private static final class Entry implements Task {
        final Instant due;
        final Runnable task;
        boolean cancelled;

        Entry(Instant due, Runnable task) {
            this.due = due;
            this.task = task;
        }

        @Override
        public synchronized void cancel() {
            cancelled = true;
        }
    }

    public ManualScheduler(FakeClock clock) {
        this.clock = clock;
    }

    @Override
    public synchronized Task schedule(Duration delay, Runnable task) {
        Entry e = new Entry(clock.instant().plus(delay), task);
        entries.add(e);
        return e;
    }

    /** Tasks scheduled and neither run nor cancelled. */
    public synchronized int pending() {
        return (int) entries.stream().filter(e -> !e.cancelled).count();
    }

    /** When the earliest pending task is due, or null. */
    public synchronized Instant nextDue() {
        return entries.stream()
                .filter(e -> !e.cancelled)
                .map(e -> e.due)
                .min(Instant::compareTo)
                .orElse(null);
    }

    /** Runs every pending task that is due by the clock (including ones they schedule that are due). */
    public void runDue() {
        while (true) {
            Entry next;
            synchronized (this) {
                next = entries.stream()
                        .filter(e -> !e.cancelled && !e.due.isAfter(clock.instant()))
                        .findFirst()
                        .orElse(null);
                if (next == null) {
                    return;
                }
                entries.remove(next);
            }
            next.task.run();
        }
    }

    @Override
    public void close() {}
}
