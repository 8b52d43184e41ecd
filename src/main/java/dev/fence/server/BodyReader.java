package dev.fence.server;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Reads a request's body without holding a thread while it arrives: chunks are taken as the connection
 * delivers them, and the result (the bytes, or the {@link HttpError} to answer) is handed on once, when the
 * body is complete, too large, broken, or late.
 *
 * <p>A body past the size limit is still read (and dropped) up to {@value #DRAIN_FACTOR} times the limit,
 * so that a client still sending receives the 413 rather than a reset connection.
 */
final class BodyReader implements Runnable {
    private static final int DRAIN_FACTOR = 4;

    /** What a body read comes to: exactly one of {@code bytes} and {@code error} is set. */
    record Outcome(byte[] bytes, HttpError error) {}

    private final Request request;
    private final int max;
    private final Duration timeout;
    private final Consumer<Outcome> then;
    private final AtomicBoolean done = new AtomicBoolean();
    private final ByteArrayOutputStream out;
    private long total;
    private Scheduler scheduler;
    private long started;
    private Scheduler.Task deadline;

    private BodyReader(Request request, int max, Duration timeout, int expected, Consumer<Outcome> then) {
        this.request = request;
        this.max = max;
        this.timeout = timeout;
        this.then = then;
        this.out = new ByteArrayOutputStream(expected > 0 ? Math.min(expected, max) : 1024);
    }

    /**
     * Starts reading {@code request}'s body; {@code then} runs once, on whichever thread finishes it.
     *
     * @param max the longest body accepted (413 past it)
     * @param timeout how long the whole body may take to arrive (408 past it)
     */
    static void read(Request request, int max, Duration timeout, Scheduler scheduler, Consumer<Outcome> then) {
        long declared = request.getLength();
        BodyReader r = new BodyReader(request, max, timeout, (int) Math.min(declared, Integer.MAX_VALUE), then);
        r.scheduler = scheduler;
        r.started = System.nanoTime();
        r.run();
    }

    @Override
    public void run() {
        while (!done.get()) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                armDeadline();
                request.demand(this);
                return;
            }
            if (Content.Chunk.isFailure(chunk)) {
                finish(new Outcome(null, broken(chunk.getFailure())));
                return;
            }
            ByteBuffer b = chunk.getByteBuffer();
            int n = b.remaining();
            total += n;
            if (total <= max) {
                byte[] copy = new byte[n];
                b.get(copy);
                out.write(copy, 0, n);
            }
            boolean last = chunk.isLast();
            chunk.release();
            if (total > (long) max * DRAIN_FACTOR || (last && total > max)) {
                finish(new Outcome(null, tooLarge()));
                return;
            }
            if (last) {
                finish(new Outcome(out.toByteArray(), null));
                return;
            }
        }
    }

    /**
     * Starts the body's deadline the first time the reader has to wait: the usual body arrives with its
     * headers and is read at once, without a timer set and cancelled for it.
     */
    private synchronized void armDeadline() {
        if (deadline == null && !done.get()) {
            long left = timeout.toNanos() - (System.nanoTime() - started);
            deadline = scheduler.schedule(this::late, Math.max(0, left), TimeUnit.NANOSECONDS);
        }
    }

    private void late() {
        finish(new Outcome(
                null,
                new HttpError(
                        408,
                        "the request body did not arrive within " + timeout.toMillis() / 1000.0
                                + " s; send it at once, or check the network")));
    }

    private void finish(Outcome o) {
        if (done.compareAndSet(false, true)) {
            Scheduler.Task d;
            synchronized (this) {
                d = deadline;
            }
            if (d != null) {
                d.cancel();
            }
            then.accept(o);
        }
    }

    private HttpError tooLarge() {
        return new HttpError(413, "the request body is larger than the server's limit of " + max + " bytes");
    }

    private static HttpError broken(Throwable failure) {
        if (failure instanceof EofException) {
            return new HttpError(
                    400,
                    "the request body could not be read: it ended before its Content-Length, or its chunked"
                            + " encoding is malformed");
        }
        if (failure instanceof HttpException h) {
            return new HttpError(
                    h.getCode() >= 400 && h.getCode() < 500 ? h.getCode() : 400,
                    "the request body could not be read: " + h.getReason());
        }
        String m = failure == null || failure.getMessage() == null ? "the connection failed" : failure.getMessage();
        return new HttpError(400, "the request body could not be read: " + m);
    }
}
