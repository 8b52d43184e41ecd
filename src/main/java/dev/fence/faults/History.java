package dev.fence.faults;

import java.util.ArrayList;
import java.util.List;

/**
 * What the clients of one fault run saw, in the order they saw it: every grant and every push. Times are
 * {@link System#nanoTime()} readings taken just before an operation was sent ({@code invoked}) and just
 * after its answer arrived ({@code acked}); an operation acknowledged before another was invoked happened
 * before it, whatever the threads did in between. Proofs are never kept, only their SHA-256.
 *
 * <p>Thread-safe: clients record concurrently; readers get copies.
 */
final class History {
    /**
     * A lease granted to a client.
     *
     * @param resource the resource
     * @param holder who it was granted to
     * @param token the fencing token
     * @param generation the store generation the grant reported
     * @param proofHash the SHA-256 (hex) of the grant's proof
     */
    public record Grant(
            String resource,
            String holder,
            long token,
            String generation,
            String proofHash,
            long invokedNanos,
            long ackedNanos) {}

    /**
     * One {@code git push} of one ref.
     *
     * @param ref the full ref name
     * @param holder whose grant the push carried (and who the pusher was)
     * @param token the token it carried
     * @param stale true for a stale grant woken up and force-pushed: one that a live grant of the client
     *     that woke it superseded (its own holder's earlier grants included), so it must be refused
     * @param accepted the ref was updated
     * @param forced git reported a forced (non-fast-forward) update
     * @param oldId the ref's value before an accepted push as git reported it (possibly abbreviated), or null
     * @param newId the commit pushed: the one commit the holder wrote for it
     * @param reason for a refused push, the hook's first line (its FENCED line) or git's summary; else null
     */
    public record Push(
            String ref,
            String holder,
            long token,
            boolean stale,
            boolean accepted,
            boolean forced,
            String oldId,
            String newId,
            String reason,
            long invokedNanos,
            long ackedNanos) {}

    private final List<Grant> grants = new ArrayList<>();
    private final List<Push> pushes = new ArrayList<>();

    public synchronized void grant(Grant g) {
        grants.add(g);
    }

    public synchronized void push(Push p) {
        pushes.add(p);
    }

    public synchronized List<Grant> grants() {
        return List.copyOf(grants);
    }

    public synchronized List<Push> pushes() {
        return List.copyOf(pushes);
    }

    /** Accepted pushes to {@code ref} acknowledged after {@code sinceNanos}. */
    synchronized int acceptedSince(String ref, long sinceNanos) {
        int n = 0;
        for (Push p : pushes) {
            if (p.accepted() && p.ref().equals(ref) && p.ackedNanos() > sinceNanos) {
                n++;
            }
        }
        return n;
    }

    /**
     * True when {@code ref} took an accepted push under a grant invoked after {@code sinceNanos}: a write
     * whose grant and push both happened since then.
     */
    synchronized boolean wroteSince(String ref, String resource, long sinceNanos) {
        for (Push p : pushes) {
            if (!p.accepted() || p.stale() || !p.ref().equals(ref) || p.ackedNanos() <= sinceNanos) {
                continue;
            }
            for (Grant g : grants) {
                if (g.invokedNanos() > sinceNanos
                        && g.token() == p.token()
                        && g.holder().equals(p.holder())
                        && g.resource().equals(resource)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Grants acknowledged after {@code sinceNanos}. */
    synchronized int grantsSince(long sinceNanos) {
        int n = 0;
        for (Grant g : grants) {
            if (g.ackedNanos() > sinceNanos) {
                n++;
            }
        }
        return n;
    }
}
