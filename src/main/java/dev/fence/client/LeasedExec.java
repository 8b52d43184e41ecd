package dev.fence.client;

import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseStanding;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code fence exec}: runs a tool's command under a lease. Runs under the grant it is given (by
 * token), or acquires one when the holder holds nothing on the resource (never over its own current
 * lease, which would replace the grant the harness holds); renews it before the command starts, every third of the TTL while it runs and once more
 * when it ends, and reports a lost lease at once (the FENCED message on stderr). With {@code
 * killOnLoss} the command is stopped as soon as the lease is lost.
 *
 * <p>The command gets {@code FENCE_RESOURCE}, {@code FENCE_HOLDER} and {@code FENCE_TOKEN} in its
 * environment, never the proof.
 */
public final class LeasedExec {
    /** How long a killed command gets between SIGTERM and SIGKILL. */
    static final long KILL_GRACE_MILLIS = 2000;

    private final LeaseOperations leases;
    private final Clock clock;
    private final Scheduler scheduler;

    public LeasedExec(LeaseOperations leases, Clock clock, Scheduler scheduler) {
        this.leases = leases;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    /**
     * What to run.
     *
     * @param token the held lease's token, or 0 to acquire one
     * @param proof the held lease's proof, or null
     * @param grantSha the SHA to record when acquiring a git resource, or null
     */
    public record Request(
            String resource,
            String holder,
            Duration ttl,
            long token,
            String proof,
            String grantSha,
            boolean killOnLoss,
            List<String> command,
            Path cwd,
            Map<String, String> env) {}

    /** Where fence's and the command's streams go; see {@link ChildProcess.Io}. */
    public record Streams(
            InputStream in,
            boolean inheritIn,
            PrintWriter out,
            boolean inheritOut,
            PrintWriter err,
            boolean inheritErr) {}

    /** What happened. */
    public sealed interface Outcome {
        /** Another holder's lease is live; nothing ran. */
        record Busy(AcquireOutcome.Busy busy) implements Outcome {}

        /**
         * The command ran (or, when {@code started} is false, the lease was lost before it could start).
         *
         * @param exitCode the command's exit code (meaningless when not started)
         * @param lost the FENCED outcome when the lease was lost, else null
         * @param killed the command was stopped because the lease was lost
         */
        record Ran(String resource, long token, boolean started, int exitCode, Fenced lost, boolean killed)
                implements Outcome {}
    }

    /**
     * Runs the command under the lease. Fence's own lines (the token, FENCED, renewal trouble) go to
     * {@code streams.err()}.
     *
     * @throws InvalidInputException for an empty command, and when the first renewal refuses the grant as
     *     given (a malformed proof): nothing runs
     * @throws dev.fence.core.ConfigException when the command cannot be started
     * @throws dev.fence.core.StoreUnavailableException when the lease cannot be acquired or first renewed
     */
    public Outcome run(Request r, Streams streams) throws InterruptedException {
        if (r.command().isEmpty()) {
            throw new InvalidInputException("no command given: fence exec ... -- CMD [ARGS...]");
        }
        PrintWriter err = streams.err();
        long token = r.token();
        String proof = r.proof();
        if (token != 0 && proof == null && !leases.holderAuthenticated()) {
            // The lease is renewed while the command runs, which takes the proof in direct mode: say so now,
            // before anything runs, rather than lose the lease half-way.
            throw new InvalidInputException("fence exec under token " + token + " needs the proof its grant returned"
                    + " (--grant-file FILE, --proof or $FENCE_PROOF); a holder's name and token are public");
        }
        if (token == 0) {
            refuseToReplace(r);
            AcquireOutcome a = leases.acquire(r.resource(), r.holder(), r.ttl(), r.grantSha());
            if (a instanceof AcquireOutcome.Busy b) {
                return new Outcome.Busy(b);
            }
            var grant = ((AcquireOutcome.Acquired) a).grant();
            token = grant.token();
            proof = grant.proof();
            err.println("fence: " + r.holder() + " holds " + r.resource() + " with token " + token
                    + " while the command runs (renewed every " + keeperInterval(r.ttl()) + ")");
            err.flush();
        }
        ChildProcess[] child = new ChildProcess[1];
        boolean[] killed = new boolean[1];
        LeaseKeeper keeper = new LeaseKeeper(
                leases, clock, scheduler, r.resource(), r.holder(), token, proof, r.ttl(), new LeaseKeeper.Listener() {
                    @Override
                    public void lost(Fenced fenced) {
                        synchronized (err) {
                            FencedMessage.lines(fenced).forEach(err::println);
                            err.flush();
                        }
                        if (r.killOnLoss()) {
                            ChildProcess c;
                            synchronized (child) {
                                c = child[0];
                                killed[0] = c != null && c.isAlive();
                            }
                            if (c != null) {
                                c.kill(KILL_GRACE_MILLIS);
                            }
                        }
                    }

                    @Override
                    public void trouble(String message) {
                        synchronized (err) {
                            err.println(message);
                            err.flush();
                        }
                    }
                });
        if (!keeper.renewNow()) {
            return new Outcome.Ran(r.resource(), token, false, 0, keeper.lost(), false);
        }
        Map<String, String> env = new HashMap<>(r.env());
        env.put("FENCE_RESOURCE", r.resource());
        env.put("FENCE_HOLDER", r.holder());
        env.put("FENCE_TOKEN", Long.toString(token));
        env.remove("FENCE_PROOF");
        ChildProcess c = ChildProcess.start(
                r.command(),
                r.cwd(),
                env,
                new ChildProcess.Io(
                        streams.in(),
                        streams.inheritIn(),
                        streams.out(),
                        streams.inheritOut(),
                        err,
                        streams.inheritErr()));
        synchronized (child) {
            child[0] = c;
        }
        int code;
        try {
            keeper.start();
            code = c.waitFor();
        } catch (InterruptedException e) {
            c.kill(KILL_GRACE_MILLIS);
            throw e;
        } finally {
            keeper.stop();
        }
        if (keeper.lost() == null) {
            keeper.renewNow();
        }
        boolean wasKilled;
        synchronized (child) {
            wasKilled = killed[0];
        }
        return new Outcome.Ran(r.resource(), token, true, code, keeper.lost(), wasKilled);
    }

    /**
     * Acquiring over the holder's own current lease would give it a new token and drop the grant (and
     * the recorded SHA) the harness holds: its next push and release would be FENCED by its own lease.
     * So a run without a grant acquires only when the holder holds nothing there.
     */
    private void refuseToReplace(Request r) {
        dev.fence.core.LeaseService.Status status = leases.status(r.resource());
        LeaseStanding standing = LeaseStanding.of(status.state(), r.holder(), 0, status.floor());
        if (standing instanceof LeaseStanding.Holds h) {
            throw new InvalidInputException(r.holder() + " already holds " + r.resource() + " (token "
                    + h.lease().token() + "); fence exec does not take it again, which would replace that grant:"
                    + " run under it with --grant-file FILE (from 'fence lease acquire --grant-file FILE'), or"
                    + " FENCE_TOKEN and FENCE_PROOF, or --token N");
        }
    }

    private static String keeperInterval(Duration ttl) {
        Duration third = ttl.dividedBy(3);
        Duration d = third.compareTo(LeaseKeeper.MIN_INTERVAL) < 0 ? LeaseKeeper.MIN_INTERVAL : third;
        return d.toMillis() + " ms";
    }
}
