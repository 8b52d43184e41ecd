package dev.fence.core;

import java.time.Clock;
import java.util.List;
import java.util.function.Supplier;

/**
 * Fenced writes outside git: a migration applied to a database, a shared file replaced. The token is
 * judged by the same rule as a push ({@link Admission#tokenRule}: a valid proof, at or above every token
 * that has written, the latest granted, not released), against the same store, and the decision lands in
 * the same ledger with the resource.
 *
 * <p>An admitted write raises the resource's highest accepted token in the store before the write is
 * made (as the hook records a push before git updates the ref): if the write then fails, the record is
 * ahead of what was written, which is safe because tokens only go up. The thing written to keeps its own
 * fence as well (a database's fence row, a file's hash), and what it refuses is recorded with {@link
 * #refusedByTarget}.
 *
 * <p>Thread-safe if the store is.
 */
public final class FencedWrites {
    private static final int MAX_ATTEMPTS = 8;

    private final LeaseStore store;
    private final Clock clock;
    private final Supplier<StoreIdentity> candidate;

    public FencedWrites(LeaseStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
        this.candidate = () -> Identities.candidate(clock.instant());
    }

    /**
     * A write a holder asks to make.
     *
     * @param resource the resource it writes to ({@code db/migrations}, a file's resource)
     * @param holder who asks
     * @param token the holder's token
     * @param proof the grant's proof, or null (then refused: a token number alone is not a credential)
     * @param what a short description for the ledger ({@code apply 0042_add_invoice_currency.sql})
     */
    public record Attempt(String resource, String holder, long token, String proof, String what) {
        public Attempt {
            Names.require("resource", resource);
            Names.require("holder", holder);
            if (token <= 0) {
                throw new InvalidInputException("token must be a positive whole number; got " + token);
            }
        }

        @Override
        public String toString() {
            return "Attempt[resource=" + resource + ", holder=" + holder + ", token=" + token + ", proof=(hidden)]";
        }
    }

    /** What {@link #admit} decided. */
    public sealed interface Decision {
        /** The token may write; the store records it as accepted. */
        record Admitted(String resource, String holder, long token) implements Decision {}

        /** The token may not write: FENCED (or REJECTED for contention), already in the ledger. */
        record Refused(Fenced fenced) implements Decision {}
    }

    /**
     * Judges {@code a} against the store; on admission raises the resource's highest accepted token to
     * the attempt's and appends an {@link EventType#ACCEPT} event, on refusal appends a {@link
     * EventType#REJECT} event, atomically with the decision's snapshot (a grant that lands in between
     * makes the store judge again).
     *
     * @throws StoreUnavailableException when the store cannot be reached; nothing may be written then
     */
    public Decision admit(Attempt a) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            var read = store.identityAndSnapshot(List.of(a.resource()), candidate);
            StoreIdentity identity = read.identity();
            ResourceState s = read.states().get(a.resource());
            if (s == null) {
                s = ResourceState.empty(a.resource());
            }
            Admission.Refusal r = Admission.tokenRule(
                    a.resource(),
                    a.resource(),
                    "the write carried token " + a.token() + " without a proof (--proof or FENCE_PROOF)",
                    a.token(),
                    a.proof(),
                    s,
                    identity,
                    null,
                    Proofs.standard());
            if (r == null && !a.holder().equals(Proofs.holderOf(a.proof()))) {
                r = new Admission.Refusal(
                        Reason.NOT_HOLDER,
                        "the proof was issued to " + Proofs.holderOf(a.proof()) + ", not to " + a.holder());
            }
            if (r != null) {
                Fenced f = new Fenced(
                        a.resource(),
                        null,
                        a.token(),
                        s.latestGranted(),
                        r.reason(),
                        s.lease() == null ? null : s.lease().holder(),
                        s.tip(),
                        r.detail());
                // As for a push: a token without a valid proof proves nothing about who holds it.
                boolean proven = r.reason() != Reason.BAD_PROOF && r.reason() != Reason.OLD_GENERATION;
                store.append(List.of(event(a, proven, EventType.REJECT, r.reason(), r.detail())));
                return new Decision.Refused(f);
            }
            ResourceWrite w = new ResourceWrite(
                    a.resource(),
                    s.version(),
                    s.latestGranted(),
                    Math.max(a.token(), s.highestAccepted()),
                    false,
                    s.baseToken(),
                    s.baseSha(),
                    s.lastTokenWriteSha(),
                    s.tip(),
                    identity.generation());
            CommitResult c =
                    store.commit(List.of(w), List.of(event(a, true, EventType.ACCEPT, Reason.ACCEPTED, a.what())));
            if (c instanceof CommitResult.Committed) {
                return new Decision.Admitted(a.resource(), a.holder(), a.token());
            }
        }
        String detail = "grants kept changing " + a.resource() + " while the write was judged; try again";
        store.append(List.of(event(a, true, EventType.REJECT, Reason.CONTENDED, detail)));
        return new Decision.Refused(new Fenced(a.resource(), null, a.token(), 0, Reason.CONTENDED, null, null, detail));
    }

    /**
     * Records that the thing written to refused an admitted write with its own fence (a database's fence
     * row already holds a newer token, a file changed since it was read).
     */
    public void refusedByTarget(Attempt a, Fenced f) {
        store.append(List.of(event(a, true, EventType.REJECT, f.reason(), f.detail())));
    }

    /** Records that an admitted write was made ({@code detail}: what was written). */
    public void landed(Attempt a, String detail) {
        store.append(List.of(event(a, true, EventType.LANDED, Reason.ACCEPTED, detail)));
    }

    private LedgerEvent event(Attempt a, boolean proven, EventType type, Reason reason, String detail) {
        return new LedgerEvent(
                0,
                clock.instant(),
                type,
                a.resource(),
                null,
                null,
                proven ? a.holder() : null,
                null,
                a.token(),
                null,
                null,
                reason.code(),
                detail);
    }
}
