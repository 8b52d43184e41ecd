package dev.fence.server;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Closes connections whose request headers take longer than the request timeout to arrive, which Jetty's
 * idle timeout alone does not: a client sending one byte a second is never idle (slow loris).
 *
 * <p>A connection is timed from its opening until its first request's headers are complete, and again
 * from the first byte of each later request on it; while a request is handled it is not timed (its body
 * has a deadline of its own, and a handler is bounded by the store timeout). A connection waiting between
 * requests without sending anything is left to the idle timeout. One task on the server's scheduler looks
 * at every connection four times per timeout, so a slow header is cut off between one and 1.25 timeouts
 * after it began. Thread-safe.
 */
final class ConnectionWatch implements Connection.Listener {
    private final Scheduler scheduler;
    private final long timeoutNanos;
    private final long tickMillis;
    private final Map<Connection, Watch> watches = new ConcurrentHashMap<>();
    private volatile boolean stopped;

    ConnectionWatch(Scheduler scheduler, Duration timeout) {
        this.scheduler = scheduler;
        this.timeoutNanos = timeout.toNanos();
        this.tickMillis = Math.max(50, timeout.toMillis() / 4);
    }

    /** Starts the checks (once the scheduler runs); they go on until {@link #stop()}. */
    void start() {
        scheduler.schedule(this::sweep, tickMillis, TimeUnit.MILLISECONDS);
    }

    void stop() {
        stopped = true;
    }

    @Override
    public void onOpened(Connection connection) {
        watches.put(connection, new Watch(connection));
    }

    @Override
    public void onClosed(Connection connection) {
        watches.remove(connection);
    }

    /** A request on {@code connection} has its headers and is being handled. */
    void handling(Connection connection) {
        Watch w = watches.get(connection);
        if (w != null) {
            w.handling();
        }
    }

    /** The request on {@code connection} has been answered; the next one's headers are timed again. */
    void answered(Connection connection) {
        Watch w = watches.get(connection);
        if (w != null) {
            w.answered();
        }
    }

    /** Connections watched now (for tests). */
    int size() {
        return watches.size();
    }

    /** One look at every connection; one task for all of them, so a connection costs no timer of its own. */
    private void sweep() {
        if (stopped) {
            return;
        }
        long now = System.nanoTime();
        for (Watch w : watches.values()) {
            if (w.late(now)) {
                w.connection.getEndPoint().close();
            }
        }
        scheduler.schedule(this::sweep, tickMillis, TimeUnit.MILLISECONDS);
    }

    private final class Watch {
        private final Connection connection;
        private boolean handling;
        private long bytesSeen;
        private long messagesSeen;
        /** When the headers being waited for began to arrive, or -1 while none are. */
        private long since;

        private long lastLook;

        Watch(Connection connection) {
            this.connection = connection;
            this.lastLook = System.nanoTime();
            // A new connection owes its first request's headers from the moment it opened.
            this.since = lastLook;
        }

        synchronized void handling() {
            handling = true;
            since = -1;
        }

        synchronized void answered() {
            handling = false;
            since = -1;
            bytesSeen = connection.getBytesIn();
            messagesSeen = connection.getMessagesIn();
        }

        /** True when headers have been arriving, without completing, for the timeout or longer. */
        synchronized boolean late(long now) {
            boolean late = false;
            if (!handling) {
                long bytes = connection.getBytesIn();
                long messages = connection.getMessagesIn();
                if (messages != messagesSeen) {
                    // A request began since the last look; its handling says when it ends.
                    messagesSeen = messages;
                    bytesSeen = bytes;
                    since = -1;
                } else if (bytes != bytesSeen && since < 0) {
                    since = lastLook;
                }
                late = since >= 0 && now - since >= timeoutNanos;
            }
            lastLook = now;
            return late;
        }
    }
}
