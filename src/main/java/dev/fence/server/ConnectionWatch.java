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
 * requests without sending anything is left to the idle timeout. Checks run on the server's scheduler a
 * few times per timeout, so a slow header is cut off between one and 1.25 timeouts after it began.
 * Thread-safe.
 */
final class ConnectionWatch implements Connection.Listener {
    private final Scheduler scheduler;
    private final long timeoutNanos;
    private final long tickMillis;
    private final Map<Connection, Watch> watches = new ConcurrentHashMap<>();

    ConnectionWatch(Scheduler scheduler, Duration timeout) {
        this.scheduler = scheduler;
        this.timeoutNanos = timeout.toNanos();
        this.tickMillis = Math.max(50, timeout.toMillis() / 4);
    }

    @Override
    public void onOpened(Connection connection) {
        Watch w = new Watch(connection);
        watches.put(connection, w);
        w.schedule();
    }

    @Override
    public void onClosed(Connection connection) {
        Watch w = watches.remove(connection);
        if (w != null) {
            w.stop();
        }
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

    private final class Watch implements Runnable {
        private final Connection connection;
        private boolean handling;
        private boolean stopped;
        private long bytesSeen;
        private long messagesSeen;
        /** When the headers being waited for began to arrive, or -1 while none are. */
        private long since;

        private long lastTick;
        private Scheduler.Task task;

        Watch(Connection connection) {
            this.connection = connection;
            this.lastTick = System.nanoTime();
            // A new connection owes its first request's headers from the moment it opened.
            this.since = lastTick;
        }

        synchronized void schedule() {
            if (!stopped) {
                task = scheduler.schedule(this, tickMillis, TimeUnit.MILLISECONDS);
            }
        }

        synchronized void stop() {
            stopped = true;
            if (task != null) {
                task.cancel();
            }
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

        @Override
        public void run() {
            boolean close = false;
            synchronized (this) {
                if (stopped) {
                    return;
                }
                long now = System.nanoTime();
                if (!handling) {
                    long bytes = connection.getBytesIn();
                    long messages = connection.getMessagesIn();
                    if (messages != messagesSeen) {
                        // A request began since the last look; its handling says when it ends.
                        messagesSeen = messages;
                        bytesSeen = bytes;
                        since = -1;
                    } else if (bytes != bytesSeen && since < 0) {
                        since = lastTick;
                    }
                    close = since >= 0 && now - since >= timeoutNanos;
                }
                lastTick = now;
            }
            if (close) {
                connection.getEndPoint().close();
                return;
            }
            schedule();
        }
    }
}
