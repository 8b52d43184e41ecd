package dev.fence.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * At most {@code size} connections, kept open between calls: a call borrows one (an idle one, else a new
 * one), and gives it back when its transaction has ended, or discards it when it may be broken. Idle
 * connections are reused newest first, so a pool that a burst grew shrinks back as the older ones are
 * left alone. Thread-safe.
 */
final class ConnectionPool {
    /** Opens a new connection, giving up at {@code deadline} ({@link System#nanoTime()}). */
    @FunctionalInterface
    interface Connector {
        Connection connect(long deadline) throws SQLException;
    }

    /**
     * A borrowed connection.
     *
     * @param connection the connection, in no transaction
     * @param reused true when it had been idle in the pool (it may have gone stale meanwhile)
     */
    record Borrowed(Connection connection, boolean reused) {}

    private final Connector connector;
    private final Semaphore permits;
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private boolean closed;

    ConnectionPool(int size, Connector connector) {
        this.connector = connector;
        this.permits = new Semaphore(size, true);
    }

    /**
     * A connection for one call, or null when all are in use until {@code deadline}.
     *
     * @throws SQLException when a new connection cannot be opened
     */
    Borrowed borrow(long deadline) throws SQLException, InterruptedException {
        if (!permits.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            return null;
        }
        boolean handedOut = false;
        try {
            Connection c;
            synchronized (idle) {
                c = idle.pollFirst();
            }
            Borrowed b = c != null ? new Borrowed(c, true) : new Borrowed(connector.connect(deadline), false);
            handedOut = true;
            return b;
        } finally {
            if (!handedOut) {
                permits.release();
            }
        }
    }

    /** Takes back a connection whose transaction has ended (committed or rolled back). */
    void giveBack(Connection c) {
        boolean keep;
        synchronized (idle) {
            keep = !closed;
            if (keep) {
                idle.addFirst(c);
            }
        }
        if (!keep) {
            closeQuietly(c);
        }
        permits.release();
    }

    /** Closes a borrowed connection that may be broken or in an unknown state, instead of giving it back. */
    void discard(Connection c) {
        closeQuietly(c);
        permits.release();
    }

    /** Closes every idle connection: after one turned out broken, the others (same server) likely are too. */
    void discardIdle() {
        for (Connection c : drain()) {
            closeQuietly(c);
        }
    }

    /** Closes the idle connections now, and the borrowed ones as they come back. */
    void close() {
        synchronized (idle) {
            closed = true;
        }
        discardIdle();
    }

    private List<Connection> drain() {
        synchronized (idle) {
            List<Connection> out = new ArrayList<>(idle);
            idle.clear();
            return out;
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            // Best effort: the server ends the session (and rolls back) when the socket closes.
        }
    }
}
