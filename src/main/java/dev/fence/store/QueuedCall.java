package dev.fence.store;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A store call waiting for a transaction that whichever waiting thread leads may run for it (group commit):
 * its caller, its deadline and where it stands. Queued, it is either taken by a leader (who then must mark
 * it done) or cancelled by its caller (who then stops waiting); never both, as the two race on one
 * compare-and-set. A leader writes the call's outcome before marking it done, and the caller reads it after
 * seeing it done: the state is the volatile handoff between the two threads.
 */
public abstract class QueuedCall {
    private static final int QUEUED = 0;
    private static final int TAKEN = 1;
    private static final int CANCELLED = 2;
    private static final int DONE = 3;

    private final AtomicInteger state = new AtomicInteger(QUEUED);
    private final Thread caller = Thread.currentThread();
    private final long deadline;

    /** A call of the current thread, which waits for it until {@code deadline} ({@link System#nanoTime()}). */
    protected QueuedCall(long deadline) {
        this.deadline = deadline;
    }

    /** When its caller stops waiting, if no leader has taken it by then. */
    public final long deadline() {
        return deadline;
    }

    public final boolean isQueued() {
        return state.get() == QUEUED;
    }

    public final boolean isDone() {
        return state.get() == DONE;
    }

    /** A leader takes the call; false if its caller gave up on it first. */
    public final boolean take() {
        return state.compareAndSet(QUEUED, TAKEN);
    }

    /** Its caller gives up on it; false if a leader has already taken it. */
    public final boolean cancel() {
        return state.compareAndSet(QUEUED, CANCELLED);
    }

    /** Back to waiting for a transaction, nothing of it having run. */
    protected final void requeue() {
        state.set(QUEUED);
    }

    /** Marks it done, its outcome written, and wakes its caller. */
    protected final void done() {
        state.set(DONE);
        wake();
    }

    /** Wakes its caller (to lead, or to see its outcome), unless the caller is the current thread. */
    public final void wake() {
        if (caller != Thread.currentThread()) {
            LockSupport.unpark(caller);
        }
    }
}
