package dev.fence.core;

import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Judges pushes against a store: snapshot, {@link Admission#decide}, then an atomic compare-and-set
 * commit of the admitted writes with their ledger events; rejections are appended to the ledger.
 *
 * <p>If a resource changes between snapshot and commit (a grant, another push), the commit writes
 * nothing and the push is judged again from a fresh snapshot, so a successor's grant that lands in
 * between fences the push exactly as if it had come first.
 *
 * <p>Thread-safe if the store is.
 */
public final class AdmissionService {
    private static final int MAX_ATTEMPTS = 8;

    private final LeaseStore store;
    private final FencePolicy policy;
    private final Clock clock;
    private final Supplier<StoreIdentity> candidate;
    private final Proofs proofs;

    /** A service that checks proofs with the JCE's MAC. */
    public AdmissionService(LeaseStore store, FencePolicy policy, Clock clock) {
        this(store, policy, clock, Proofs.standard());
    }

    /** A service that checks proofs with {@code proofs}. */
    public AdmissionService(LeaseStore store, FencePolicy policy, Clock clock, Proofs proofs) {
        this.store = store;
        this.policy = policy;
        this.clock = clock;
        this.candidate = Identities.candidates(clock);
        this.proofs = proofs;
    }

    /**
     * Judges {@code push}. A push that touches no fenced ref is accepted without contacting the store.
     *
     * @throws StoreUnavailableException when the store cannot be reached; the caller then applies
     *     {@link Admission#storeDown}
     * @throws KnownAncestry.Needed when {@code ancestry} lacks facts the decision needs; nothing was
     *     written
     */
    public Verdict admit(PushAttempt push, Ancestry ancestry) {
        return admit(push, ancestry, java.util.Map.of(), null);
    }

    /**
     * As {@link #admit(PushAttempt, Ancestry)}, against the repository's own record of accepted tokens, and
     * writing only while {@code gate} lets it.
     *
     * @param marks the repository's record by resource (see {@link AcceptedMark})
     * @param gate asked once, right before the first write (the commit or the rejections' events): false
     *     means whoever asked no longer waits for the answer (its time ran out and it answered otherwise),
     *     so nothing is written and {@link Abandoned} is thrown; once it said true, the caller waits for
     *     the answer. Null for no gate.
     */
    public Verdict admit(
            PushAttempt push, Ancestry ancestry, java.util.Map<String, AcceptedMark> marks, BooleanSupplier gate) {
        return admit(push, ancestry, marks, gate, false);
    }

    /**
     * As {@link #admit(PushAttempt, Ancestry, java.util.Map, BooleanSupplier)}; with {@code deferLanding},
     * an accepted push writes only what keeps the fence safe ({@link Landings#deferred}), and the caller
     * applies the rest when the updates land ({@link Landings#land}).
     */
    public Verdict admit(
            PushAttempt push,
            Ancestry ancestry,
            java.util.Map<String, AcceptedMark> marks,
            BooleanSupplier gate,
            boolean deferLanding) {
        Set<String> resources = new LinkedHashSet<>();
        for (RefUpdate u : push.updates()) {
            if (policy.isFenced(u.ref())) {
                resources.add(Resources.forRef(push.repoId(), u.ref()));
            }
        }
        if (resources.isEmpty()) {
            List<RefDecision> untouched = new ArrayList<>();
            for (RefUpdate u : push.updates()) {
                untouched.add(new RefDecision.Untouched(u));
            }
            return new Verdict(untouched, List.of());
        }
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            var read = store.identityAndSnapshot(resources, candidate);
            StoreIdentity identity = read.identity();
            var states = read.states();
            Admission.Plan plan =
                    Admission.decide(push, states, identity, policy, ancestry, clock.instant(), marks, proofs);
            if (deferLanding && plan.verdict().accepted()) {
                plan = Landings.deferred(plan, states);
            }
            // A caller without the repository (fence serve) answers ancestry from facts it was sent; a
            // decision built on a provisional answer must not be recorded: ask for the missing facts.
            ancestry.requireSettled();
            if (gate != null && attempt == 0 && !gate.getAsBoolean()) {
                throw new Abandoned();
            }
            if (!plan.verdict().accepted()) {
                store.append(plan.events());
                return plan.verdict();
            }
            if (store.commit(plan.writes(), plan.events()) instanceof CommitResult.Committed) {
                return plan.verdict();
            }
        }
        return contended(push);
    }

    /**
     * Thrown by {@link #admit(PushAttempt, Ancestry, java.util.Map, BooleanSupplier)} when its gate closed
     * before anything was written: the push was answered without this verdict, and nothing records it.
     */
    public static final class Abandoned extends FenceException {
        private static final long serialVersionUID = 1L;

        Abandoned() {
            super("the push was answered before the store did; nothing was recorded");
        }
    }

    private Verdict contended(PushAttempt push) {
        List<RefDecision> decisions = new ArrayList<>();
        List<LedgerEvent> events = new ArrayList<>();
        for (RefUpdate u : push.updates()) {
            if (!policy.isFenced(u.ref())) {
                decisions.add(new RefDecision.Untouched(u));
                continue;
            }
            String resource = Resources.forRef(push.repoId(), u.ref());
            long token = push.options().token().orElse(Tokens.NONE);
            String detail = "other pushes and grants kept changing " + u.ref() + "; try the push again";
            decisions.add(new RefDecision.Refused(
                    u, new Fenced(resource, u.ref(), token, 0, Reason.CONTENDED, null, null, detail)));
            events.add(Admission.pushEvent(
                    push, u, resource, null, EventType.REJECT, token, Reason.CONTENDED, detail, clock.instant()));
        }
        store.append(events);
        return new Verdict(decisions, List.of());
    }
}
