package dev.fence.client;

import dev.fence.core.FenceException;
import dev.fence.core.Fenced;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Keeps a lease alive while a tool's subprocess runs: renews when told ({@link #renewNow}: before the
 * tool starts and after it ends) and, between {@link #start} and {@link #stop}, every third of the TTL.
 *
 * <p>Renewals belong to a running tool, not to a free-standing timer: a keeper that is not started
 * renews nothing, so a lease lapses while an agent is paused (that is fine: the fence catches a stale
 * holder). When a renewal finds the lease lost (superseded, released, …) the keeper tells its listener
 * once and stops; when the store cannot be reached it tells the listener and keeps trying. A renewal
 * refused for what was asked (a malformed proof, a bad name) is neither: no retry cures it, so {@link
 * #renewNow} throws it and a scheduled renewal reports it and stops.
 *
 * <p>Thread-safe.
 */
public final class LeaseKeeper {
    /** The shortest interval between scheduled renewals. */
    static final Duration MIN_INTERVAL = Duration.ofMillis(50);

    /** What the keeper reports. Called on the thread that renewed; must not block for long. */
    public interface Listener {
        /** The lease is lost: FENCED. Called at most once. */
        void lost(Fenced fenced);

        /** A renewal could not reach the store; the keeper keeps trying. */
        void trouble(String message);
    }

    private final LeaseOperations leases;
    private final Clock clock;
    private final Scheduler scheduler;
    private final String resource;
    private final String holder;
    private final long token;
    private final String proof;
    private final Duration ttl;
    private final Listener listener;

    private boolean running;
    private Scheduler.Task next;
    private Fenced lost;
    private Instant expiresAt;
    private Instant lastAttempt;
    private int renewals;

    /**
     * @param proof the grant's proof, or null to renew by holder and token alone
     * @param ttl the lease length each renewal asks for
     */
    public LeaseKeeper(
            LeaseOperations leases,
            Clock clock,
            Scheduler scheduler,
            String resource,
            String holder,
            long token,
            String proof,
            Duration ttl,
            Listener listener) {
        this.leases = leases;
        this.clock = clock;
        this.scheduler = scheduler;
        this.resource = resource;
        this.holder = holder;
        this.token = token;
        this.proof = proof;
        this.ttl = ttl;
        this.listener = listener;
    }

    /** How often a started keeper renews: a third of the TTL (at least {@link #MIN_INTERVAL}). */
    public Duration interval() {
        Duration third = ttl.dividedBy(3);
        return third.compareTo(MIN_INTERVAL) < 0 ? MIN_INTERVAL : third;
    }

    /**
     * Renews now.
     *
     * @return true while the lease is current (also when the store could not be reached this time)
     * @throws FenceException other than {@link StoreUnavailableException} when the renewal itself is refused
     *     (a malformed proof is {@link dev.fence.core.InvalidInputException}): the lease cannot be kept, and
     *     reporting it as passing trouble would let a tool run under a grant that was never the caller's
     */
    public boolean renewNow() {
        Fenced justLost = null;
        String problem = null;
        synchronized (this) {
            if (lost != null) {
                return false;
            }
            lastAttempt = clock.instant();
            try {
                CheckOutcome c = leases.renew(resource, holder, token, proof, ttl);
                renewals++;
                if (c instanceof CheckOutcome.Current cur) {
                    expiresAt = cur.lease().expiresAt();
                } else {
                    lost = ((CheckOutcome.Lost) c).fenced();
                    justLost = lost;
                    cancelNext();
                    running = false;
                }
            } catch (StoreUnavailableException e) {
                problem = "fence: could not renew the lease on " + resource + " (" + e.getMessage() + ")"
                        + (expiresAt == null
                                ? ""
                                : "; it lapses at " + expiresAt + " unless a later renewal gets through");
            }
        }
        if (justLost != null) {
            listener.lost(justLost);
            return false;
        }
        if (problem != null) {
            listener.trouble(problem);
        }
        return true;
    }

    /** Starts renewing every {@link #interval()}, counted from the last renewal. */
    public synchronized void start() {
        if (running || lost != null) {
            return;
        }
        running = true;
        scheduleNext();
    }

    /** Stops the scheduled renewals (a renewal in progress finishes). */
    public synchronized void stop() {
        running = false;
        cancelNext();
    }

    /** The FENCED outcome that ended the lease, or null while it is current. */
    public synchronized Fenced lost() {
        return lost;
    }

    /** The lease's expiry after the last successful renewal, or null before the first. */
    public synchronized Instant expiresAt() {
        return expiresAt;
    }

    /** How many renewals reached the store. */
    public synchronized int renewals() {
        return renewals;
    }

    private void tick() {
        synchronized (this) {
            if (!running) {
                return;
            }
        }
        try {
            renewNow();
        } catch (FenceException e) {
            // On the scheduler's thread there is no caller to throw to: say why, and stop asking in vain.
            stop();
            listener.trouble("fence: stopped renewing the lease on " + resource + ": " + e.getMessage());
            return;
        }
        synchronized (this) {
            if (running) {
                scheduleNext();
            }
        }
    }

    private void scheduleNext() {
        Duration delay = interval();
        if (lastAttempt != null) {
            // Counted from the last renewal by the injected clock, so a slow renewal does not stretch the gap.
            Duration since = Duration.between(lastAttempt, clock.instant());
            delay = since.isNegative() || since.compareTo(delay) >= 0 ? Duration.ZERO : delay.minus(since);
        }
        next = scheduler.schedule(delay, this::tick);
    }

    private void cancelNext() {
        if (next != null) {
            next.cancel();
            next = null;
        }
    }
}
