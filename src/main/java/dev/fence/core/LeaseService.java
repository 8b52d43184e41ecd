package dev.fence.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * Leases on named resources: acquire, renew, release, status. Validates input, issues and checks
 * proofs, and turns the store's answers into outcomes; the store does each step atomically.
 *
 * <p>Leases are liveness, not safety: they keep two healthy agents off the same resource. Safety comes
 * from the tokens, which the git host's hook checks on every push.
 *
 * <p>The direct implementation of the lease port: the caller holds the store's credentials, so proofs
 * are issued here with the store's key. Closing the service closes its store.
 *
 * <p>Thread-safe if the store is.
 */
public final class LeaseService implements LeaseOperations {
    /** Longest lease accepted: a longer one is a reservation, not a lease. */
    static final Duration MAX_TTL = Duration.ofDays(1);

    private final LeaseStore store;
    private final Clock clock;
    private final boolean holderAuthenticated;

    /**
     * The direct-mode service: {@link #renew} and {@link #release} want the grant's proof, and {@link
     * #proof} issues none, since whoever calls can name any holder.
     */
    public LeaseService(LeaseStore store, Clock clock) {
        this(store, clock, false);
    }

    private LeaseService(LeaseStore store, Clock clock, boolean holderAuthenticated) {
        this.store = store;
        this.clock = clock;
        this.holderAuthenticated = holderAuthenticated;
    }

    /**
     * A service for callers whose holder the caller's door has authenticated (fence serve binds an agent's
     * credential to its holders): renew and release may name the token without the proof, and {@link
     * #proof} issues the proof of the holder's current grant.
     */
    public static LeaseService forAuthenticatedHolders(LeaseStore store, Clock clock) {
        return new LeaseService(store, clock, true);
    }

    @Override
    public boolean holderAuthenticated() {
        return holderAuthenticated;
    }

    /** What acquire did. */
    public sealed interface AcquireOutcome {
        /** A new lease. */
        record Acquired(Grant grant) implements AcquireOutcome {}

        /** Another holder's lease is live; nothing was written. */
        record Busy(String resource, String holder, Instant expiresAt) implements AcquireOutcome {}
    }

    /** What renew or release did. */
    public sealed interface CheckOutcome {
        /** The lease is current; its state after the operation. */
        record Current(String resource, Lease lease) implements CheckOutcome {}

        /** The presented lease is not current: FENCED. */
        record Lost(Fenced fenced) implements CheckOutcome {}
    }

    /**
     * A resource's status.
     *
     * @param state the stored state
     * @param generation the store's current generation
     * @param at when it was read
     * @param floor the current generation's floor: a token at or below it was granted by an older
     *     generation and is void (its lease holds nothing, whatever its expiry says), or 0 when unknown
     */
    public record Status(ResourceState state, String generation, Instant at, long floor) {
        /** The lease held at {@link #at}, or null: a void one ({@link #leaseVoid}) is not. */
        public Lease liveLease() {
            return state.lease() != null && !leaseVoid() && state.lease().isLive(at) ? state.lease() : null;
        }

        /** True when the stored lease was granted by an older generation: void, not held. */
        public boolean leaseVoid() {
            return state.lease() != null && state.lease().token() <= floor;
        }
    }

    /**
     * Grants {@code resource} to {@code holder} for {@code ttl}, unless a live lease stands in the way:
     * another holder's, or in direct mode {@code holder}'s own unless {@code held} is that lease's grant.
     *
     * <p>Why the holder's own: a new grant replaces the holder's live lease (the holder takes it again so
     * that it records the branch as it is now). In direct mode a name is no identity, and a FENCED message
     * prints the holder's, so without the grant's proof that would let anyone take a live lease by naming
     * its holder: the real holder fenced, the intruder's writes recorded under its name. Where a door
     * authenticated the holder ({@link #forAuthenticatedHolders}) its own lease is replaced without one.
     *
     * @param grantSha the remote tip to record as the lease's expected SHA, or null
     * @param held the grant of the holder's live lease, shown so that this grant may replace it, or null; one
     *     whose proof is not valid for {@code (resource, holder)} counts as none
     * @throws InvalidInputException for a bad name (a holder must be {@linkplain Names#requireHolder one plain
     *     word}) or TTL; nothing is written
     */
    @Override
    public AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha, HeldGrant held) {
        Names.require("resource", resource);
        Names.requireHolder(holder);
        long ttlMillis = ttlMillis(ttl);
        if (grantSha != null && !ObjectIds.isValid(grantSha)) {
            throw new InvalidInputException("recorded SHA is not a full object id: " + grantSha);
        }
        long ownToken = holderAuthenticated
                ? LeaseStore.ANY_OWN_TOKEN
                : shows(resource, holder, held) ? held.token() : LeaseStore.NO_OWN_TOKEN;
        Instant now = clock.instant();
        java.util.function.Supplier<StoreIdentity> candidate = () -> Identities.candidate(now);
        AcquireResult r = store.acquire(resource, holder, ttlMillis, now, grantSha, ownToken, candidate);
        if (r instanceof AcquireResult.Busy b) {
            return new AcquireOutcome.Busy(resource, b.holder(), b.expiresAt());
        }
        AcquireResult.Granted g = (AcquireResult.Granted) r;
        StoreIdentity identity = store.identityOf(g.generation(), candidate);
        if (!identity.generation().equals(g.generation())) {
            throw new StoreUnavailableException(
                    "the store changed generation while granting " + resource + " (data loss?); acquire again");
        }
        return new AcquireOutcome.Acquired(new Grant(
                resource,
                holder,
                g.token(),
                Proofs.standard().issue(identity, resource, g.token(), holder),
                g.generation(),
                g.grantedAt(),
                g.expiresAt(),
                grantSha,
                g.previous(),
                g.tip()));
    }

    /**
     * Extends the lease of {@code (holder, token)} to now + {@code ttl}. The proof must be the grant's; it
     * may be null only where the holder is authenticated ({@link #forAuthenticatedHolders}).
     *
     * @throws InvalidInputException without a proof in direct mode
     */
    @Override
    public CheckOutcome renew(String resource, String holder, long token, String proof, Duration ttl) {
        Names.require("resource", resource);
        Names.require("holder", holder);
        long ttlMillis = ttlMillis(ttl);
        requireToken(token);
        Fenced badProof = checkProof(resource, holder, token, proof);
        if (badProof != null) {
            return new CheckOutcome.Lost(badProof);
        }
        LeaseCheck c = store.renew(resource, holder, token, ttlMillis, clock.instant());
        return outcome(resource, holder, token, c);
    }

    /**
     * Releases the lease of {@code (holder, token)}; the proof as for {@link #renew}.
     *
     * @throws InvalidInputException without a proof in direct mode
     */
    @Override
    public CheckOutcome release(String resource, String holder, long token, String proof) {
        Names.require("resource", resource);
        Names.require("holder", holder);
        requireToken(token);
        Fenced badProof = checkProof(resource, holder, token, proof);
        if (badProof != null) {
            return new CheckOutcome.Lost(badProof);
        }
        return outcome(resource, holder, token, store.release(resource, holder, token, clock.instant()));
    }

    /**
     * Moves the lease's recorded SHA from {@code expectedSha} to {@code newSha} after the holder's own
     * successful push; refused unless the holder and token are still current and the recorded SHA is
     * still {@code expectedSha}. The proof as for {@link #renew}: the recorded SHA is what the next push
     * of a hookless remote runs against, so only the holder moves it.
     *
     * @throws InvalidInputException without a proof in direct mode
     */
    @Override
    public CheckOutcome moveGrantSha(
            String resource, String holder, long token, String proof, String expectedSha, String newSha) {
        Names.require("resource", resource);
        Names.require("holder", holder);
        requireToken(token);
        Fenced badProof = checkProof(resource, holder, token, proof);
        if (badProof != null) {
            return new CheckOutcome.Lost(badProof);
        }
        return outcome(resource, holder, token, store.moveGrantSha(resource, holder, token, expectedSha, newSha));
    }

    /** The resource's state now. */
    @Override
    public Status status(String resource) {
        Names.require("resource", resource);
        StoreIdentity identity = store.identity(Identities.candidate(clock.instant()));
        ResourceState s = store.snapshot(List.of(resource)).get(resource);
        // Read after the snapshot: a lease the store still had then is judged live by the clock that set
        // its end, not by this process's, which may be far off.
        Instant now = store.now().orElseGet(clock::instant);
        return new Status(s == null ? ResourceState.empty(resource) : s, identity.generation(), now, identity.floor());
    }

    @Override
    public List<LedgerEvent> grantsTo(String holder, String resource, Instant since, int limit) {
        return store.query(new LedgerQuery(resource, null, null, holder, since, Set.of(EventType.GRANT), limit));
    }

    /**
     * Issues the proof of {@code (holder, token)}'s grant, only where the holder is authenticated ({@link
     * #forAuthenticatedHolders}) and only while it is the resource's current, unreleased grant (a lapsed
     * one that no one took since still is: the hook judges tokens, not clocks). The rule {@code fence
     * serve} applies to {@code POST /v1/leases/proof}.
     *
     * @throws InvalidInputException in direct mode, for every holder: a holder's name and token are public
     *     (a FENCED message, the ledger), so a proof issued on them would let any caller push, renew or
     *     release as that holder; the caller must present the proof its grant returned
     */
    @Override
    public ProofOutcome proof(String resource, String holder, long token) {
        Names.require("resource", resource);
        Names.require("holder", holder);
        requireToken(token);
        if (!holderAuthenticated) {
            throw needsProof(resource, holder, token);
        }
        Status st = status(resource);
        Fenced refused = notCurrent(st.state(), holder, token, st.floor());
        if (refused != null) {
            return new ProofOutcome.Lost(refused);
        }
        StoreIdentity identity = identity();
        if (!identity.generation().equals(st.generation())) {
            throw new StoreUnavailableException("the store changed generation while issuing a proof; try again");
        }
        return new ProofOutcome.Issued(
                Proofs.standard().issue(identity, resource, token, holder), identity.generation());
    }

    /** Null when {@code token} is {@code holder}'s current, unreleased grant; else why not, as FENCED. */
    private static Fenced notCurrent(ResourceState s, String holder, long token, long floor) {
        LeaseStanding standing = LeaseStanding.of(s, holder, token, floor);
        if (standing instanceof LeaseStanding.NotHeld n) {
            return n.fenced();
        }
        Lease held = ((LeaseStanding.Holds) standing).lease();
        if (held.token() == token) {
            return null;
        }
        String ref = Resources.parse(s.resource()).map(Resources.GitRef::ref).orElse(null);
        if (token > s.latestGranted()) {
            return new Fenced(
                    s.resource(),
                    ref,
                    token,
                    s.latestGranted(),
                    Reason.BAD_PROOF,
                    null,
                    s.tip(),
                    "token " + token + " was never granted on " + s.resource());
        }
        return new Fenced(s.resource(), ref, token, s.latestGranted(), Reason.SUPERSEDED, holder, s.tip(), null);
    }

    /** Closes the store. */
    @Override
    public void close() {
        store.close();
    }

    /** The store's identity (generation), creating it on first use. */
    public StoreIdentity identity() {
        return store.identity(Identities.candidate(clock.instant()));
    }

    /** True when {@code held} is a grant of {@code (resource, holder)} of this store's generation. */
    private boolean shows(String resource, String holder, HeldGrant held) {
        if (held == null) {
            return false;
        }
        try {
            return checkProof(resource, holder, held.token(), held.proof()) == null;
        } catch (InvalidInputException malformed) {
            // A proof that is not even well-formed shows no grant, as a wrong one does.
            return false;
        }
    }

    @Override
    public Fenced checkProof(String resource, String holder, long token, String proof) {
        if (proof == null) {
            if (!holderAuthenticated) {
                throw needsProof(resource, holder, token);
            }
            return null;
        }
        StoreIdentity identity = identity();
        return switch (Proofs.standard().verify(identity, resource, token, proof)) {
            case VALID -> holder.equals(Proofs.holderOf(proof))
                    ? null
                    : lost(
                            resource,
                            token,
                            0,
                            Reason.NOT_HOLDER,
                            null,
                            "the proof was issued to " + Proofs.holderOf(proof) + ", not to " + holder);
            case OLD_GENERATION -> lost(resource, token, 0, Reason.OLD_GENERATION, null, null);
            case OLD_FORMAT -> lost(resource, token, 0, Reason.OLD_GENERATION, null, Proofs.OLD_FORMAT_DETAIL);
            case BAD -> lost(resource, token, 0, Reason.BAD_PROOF, null, "the proof is not the proof of this grant");
        };
    }

    /** Direct mode's refusal of a call that names a holder's grant without its proof. */
    private static InvalidInputException needsProof(String resource, String holder, long token) {
        return new InvalidInputException("acting on " + holder + "'s lease of " + resource + " (token " + token
                + ") needs the proof its grant returned (--grant-file FILE, --proof or $FENCE_PROOF): a holder's"
                + " name and token are public, the proof is what shows the call is the holder's");
    }

    private CheckOutcome outcome(String resource, String holder, long token, LeaseCheck c) {
        if (c instanceof LeaseCheck.Ok ok) {
            return new CheckOutcome.Current(resource, ok.lease());
        }
        LeaseCheck.Refused r = (LeaseCheck.Refused) c;
        Lease cur = r.current();
        Reason reason;
        String detail = null;
        if (r.latestGranted() > token) {
            reason = token <= identity().floor() ? Reason.OLD_GENERATION : Reason.SUPERSEDED;
        } else if (r.latestGranted() < token) {
            reason = Reason.BAD_PROOF;
            detail = "token " + token + " was never granted on " + resource;
        } else if (cur != null && !cur.holder().equals(holder)) {
            reason = Reason.NOT_HOLDER;
            detail = "token " + token + " belongs to " + cur.holder() + ", not " + holder;
        } else if (cur != null && cur.released()) {
            reason = Reason.RELEASED;
        } else {
            reason = Reason.SUPERSEDED;
        }
        Fenced f = new Fenced(
                resource,
                Resources.parse(resource).map(Resources.GitRef::ref).orElse(null),
                token,
                r.latestGranted(),
                reason,
                cur == null ? null : cur.holder(),
                null,
                detail);
        return new CheckOutcome.Lost(f);
    }

    private static Fenced lost(String resource, long token, long current, Reason reason, String holder, String detail) {
        return new Fenced(
                resource,
                Resources.parse(resource).map(Resources.GitRef::ref).orElse(null),
                token,
                current,
                reason,
                holder,
                null,
                detail);
    }

    private static void requireToken(long token) {
        if (token <= 0) {
            throw new InvalidInputException("token must be a positive whole number; got " + token);
        }
    }

    private static long ttlMillis(Duration ttl) {
        if (ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new InvalidInputException("ttl must be positive");
        }
        if (ttl.compareTo(MAX_TTL) > 0) {
            throw new InvalidInputException("ttl must be at most 1d; renew a short lease instead of taking a long one");
        }
        return ttl.toMillis();
    }
}
