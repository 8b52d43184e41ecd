package dev.fence.client;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs tasks after a delay. The seam that lets {@link LeaseKeeper} be driven by a real timer thread in
 * the CLI and step by step in tests.
 */
public interface Scheduler extends AutoCloseable {

    /** A scheduled task. */
    interface Task {
        /** Stops it from running if it has not started; never interrupts a run in progress. */
        void cancel();
    }

    /** Runs {@code task} once, {@code delay} from now. */
    Task schedule(Duration delay, Runnable task);

    /** Stops running tasks; never throws. */
    @Override
    void close();

    /** A scheduler with one daemon thread (it never keeps the JVM alive). */
    static Scheduler daemon(String threadName) {
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        return new Scheduler() {
            @Override
            public Task schedule(Duration delay, Runnable task) {
                ScheduledFuture<?> f = executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
                return () -> f.cancel(false);
            }

            @Override
            public void close() {
                executor.shutdownNow();
            }
        };
    }
}
