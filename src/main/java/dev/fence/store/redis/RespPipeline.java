package dev.fence.store.redis;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * One Redis connection shared by all the threads of a long-running process, its commands pipelined:
 * whichever caller finds no write in progress writes every command queued meanwhile in one go, and
 * whichever caller finds no read in progress reads replies and hands each to its caller, in order,
 * until its own has come (see {@link Wire}). Under load the server then reads and answers
 * many commands per system call instead of one, which is what lets one client keep up with dozens of
 * concurrent callers (a pool of blocking connections spends a server read, a server write and a
 * client wake-up per command).
 *
 * <p>Suits commands that answer at once, such as fence's scripts; a blocking command ({@code WAIT})
 * would hold up every caller behind it and must go elsewhere.
 *
 * <p><b>Failures.</b> A connection that fails fails every call in flight on it with a {@code
 * JedisConnectionException}; the next call connects again. A caller waits at most the timeout for its
 * reply: past it the connection is taken as hung and closed (the calls in flight fail with it), as a
 * reply that late would also hold up everything queued behind it. An error reply fails only its own
 * call. A failed connection attempt is reported to the caller that made it.
 *
 * <p>Thread-safe.
 */
final class RespPipeline implements RespCalls, AutoCloseable {
    private final RedisUrl url;
    private final int timeoutMillis;
    private final String clientName;
    private final Object connecting = new Object();

    /** The current connection, or null before the first call and after close. */
    private volatile Wire wire;

    private volatile boolean closed;

    RespPipeline(RedisUrl url, int timeoutMillis, String clientName) {
        this.url = url;
        this.timeoutMillis = timeoutMillis;
        this.clientName = clientName;
    }

    @Override
    public Object call(List<String> command) {
        return wire().call(command);
    }

    /**
     * The connection the next call goes out on, opened if there is none or the last one failed: for a
     * caller to tell whether a failure may come from a connection that went stale while idle.
     */
    Wire wire() {
        Wire w = wire;
        if (w != null && w.failure == null) {
            return w;
        }
        synchronized (connecting) {
            w = wire;
            if (w != null && w.failure == null) {
                return w;
            }
            if (closed) {
                throw new JedisConnectionException("the store is closed");
            }
            RespConnection c = RespConnection.open(url, timeoutMillis, clientName);
            try {
                c.forPipelining();
            } catch (IOException e) {
                c.close();
                throw new JedisConnectionException("Failed to connect to " + url.address() + ": " + e.getMessage(), e);
            }
            w = new Wire(c, timeoutMillis);
            wire = w;
            return w;
        }
    }

    @Override
    public void close() {
        synchronized (connecting) {
            closed = true;
            Wire w = wire;
            wire = null;
            if (w != null) {
                w.fail(new IOException("the store was closed"));
            }
        }
    }

    /**
     * One connection: its queue of commands to write and its commands awaiting replies. It has no reader
     * thread: a caller waiting for its reply reads replies itself, in order, handing each to its caller,
     * unless another caller is reading already; it stops at its own reply and wakes the caller of the
     * oldest call still waiting, who reads on. A lone caller thus writes and reads on its own thread,
     * without a hand-over between threads, and under load one read takes in many replies.
     */
    static final class Wire implements RespCalls {
        private final RespConnection connection;
        private final long timeoutNanos;
        private final Queue<Call> queued = new ConcurrentLinkedQueue<>();
        private final Queue<Call> inFlight = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean writing = new AtomicBoolean();
        private final AtomicBoolean reading = new AtomicBoolean();

        /** Why the connection failed, once it has; it is not used again after. */
        private volatile IOException failure;

        /** Some reply has arrived: a connection failure after that may be one that went stale. */
        private volatile boolean answered;

        Wire(RespConnection connection, int timeoutMillis) {
            this.connection = connection;
            this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        }

        /** Whether a reply has come back on this connection before. */
        boolean answered() {
            return answered;
        }

        @Override
        public Object call(List<String> command) {
            Call call = new Call(command, Thread.currentThread());
            long deadline = System.nanoTime() + timeoutNanos;
            queued.add(call);
            write();
            while (!call.done()) {
                if (reading.compareAndSet(false, true)) {
                    try {
                        readUntilAnswered(call, deadline);
                    } finally {
                        reading.set(false);
                    }
                    // Whoever waits longest reads on; a caller that queued meanwhile tries by itself.
                    Call next = inFlight.peek();
                    if (next != null) {
                        LockSupport.unpark(next.caller);
                    }
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        fail(timedOut());
                    } else {
                        LockSupport.parkNanos(this, left);
                    }
                }
            }
            return call.result();
        }

        /**
         * Writes what is queued, unless another caller is writing; that caller then writes it. A caller that
         * finishes writing looks again, so a command queued just as it finished is not left behind.
         */
        private void write() {
            while (!queued.isEmpty() && writing.compareAndSet(false, true)) {
                try {
                    boolean wrote = false;
                    Call next;
                    while ((next = queued.poll()) != null) {
                        IOException failed = failure;
                        if (failed != null) {
                            next.fail(failed);
                            continue;
                        }
                        // In flight before it is sent: its reply may be read before this loop ends.
                        inFlight.add(next);
                        connection.send(next.command);
                        wrote = true;
                    }
                    if (wrote) {
                        connection.flush();
                        // A reader stops at its own reply and wakes the oldest caller still waiting, which
                        // may have been the caller of a command not yet written then, parked since: with no
                        // reader now, its caller must learn that it is to read. (A reader that stops after
                        // this check finds the command in flight and wakes that caller itself.)
                        if (!reading.get()) {
                            Call oldest = inFlight.peek();
                            if (oldest != null) {
                                LockSupport.unpark(oldest.caller);
                            }
                        }
                    }
                } catch (IOException e) {
                    fail(e);
                } finally {
                    writing.set(false);
                }
            }
            if (failure != null) {
                failAll(failure);
            }
        }

        /**
         * Reads replies, each for the oldest call in flight, until {@code own} has its reply (and those
         * already received after it: handing them over would cost a thread wake-up each) or the connection
         * fails; waits no later than {@code deadline} for the next one. Only the caller that set {@link
         * #reading} calls this.
         */
        private void readUntilAnswered(Call own, long deadline) {
            try {
                while (!own.done() || (!inFlight.isEmpty() && connection.hasReceived())) {
                    long wait;
                    if (own.done()) {
                        // Draining what has arrived: the rest of a reply begun is moments away.
                        wait = timeoutNanos;
                    } else {
                        wait = deadline - System.nanoTime();
                        if (wait <= 0) {
                            throw timedOut();
                        }
                    }
                    connection.readTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
                    Object reply;
                    JedisDataException error = null;
                    try {
                        reply = connection.receive();
                    } catch (JedisDataException e) {
                        reply = null;
                        error = e;
                    }
                    Call call = inFlight.poll();
                    if (call == null) {
                        throw new IOException("Redis sent a reply no command asked for");
                    }
                    answered = true;
                    call.complete(reply, error);
                }
            } catch (IOException | RuntimeException e) {
                fail(e instanceof IOException io ? io : new IOException(e.toString(), e));
            }
        }

        private SocketTimeoutException timedOut() {
            return new SocketTimeoutException(
                    "no reply from Redis within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
        }

        /** Closes the connection and fails every call on it (the first failure is the one reported). */
        void fail(IOException cause) {
            synchronized (this) {
                if (failure == null) {
                    failure = cause;
                }
            }
            connection.close();
            failAll(failure);
        }

        private void failAll(IOException cause) {
            Call c;
            while ((c = inFlight.poll()) != null) {
                c.fail(cause);
            }
            while ((c = queued.poll()) != null) {
                c.fail(cause);
            }
        }
    }

    /** One command and, once it has come, its reply. */
    private static final class Call {
        final List<String> command;
        private final Thread caller;
        private volatile boolean done;
        private Object reply;
        private RuntimeException error;

        Call(List<String> command, Thread caller) {
            this.command = command;
            this.caller = caller;
        }

        /** The reply, or the error reply; ignored once the call has failed. */
        synchronized void complete(Object reply, JedisDataException error) {
            if (done) {
                return;
            }
            this.reply = reply;
            this.error = error;
            done = true;
            wake();
        }

        /** The connection failed; ignored once the reply has come. */
        synchronized void fail(IOException cause) {
            if (done) {
                return;
            }
            this.error = new JedisConnectionException(
                    cause.getMessage() == null ? cause.toString() : cause.getMessage(), cause);
            done = true;
            wake();
        }

        /** Wakes the caller, unless it is the reader that just completed its own call. */
        private void wake() {
            if (caller != Thread.currentThread()) {
                LockSupport.unpark(caller);
            }
        }

        boolean done() {
            return done;
        }

        /** The reply, once {@link #done}; throws the error reply or the connection's failure. */
        synchronized Object result() {
            if (error != null) {
                throw error;
            }
            return reply;
        }
    }
}
