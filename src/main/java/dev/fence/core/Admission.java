package dev.fence.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The admission rule of a push (design §4), as a pure function of the push, the store's snapshot and
 * the repository's ancestry. It decides; {@link AdmissionService} applies the decision atomically.
 *
 * <p>For a push carrying {@code fence=n}, a fenced ref update is admitted only if all hold:
 *
 * <ol>
 *   <li>the proof is valid for (the ref's resource, n, the store's generation, its holder), and that
 *       holder is the one the store granted n to and the one the repository's own record (an {@link
 *       AcceptedMark}) has for n: a store that lost data and granted n again to another holder does not
 *       let either holder through on the other's record;
 *   <li>n is at or above the repository's own record for the ref, and the store's counter is not below
 *       that record (a store behind the repository is reported, not trusted);
 *   <li>the lease of n was not released, and the pusher may push for its holder ({@code holder-pushers});
 *   <li>n ≥ the highest token admitted on the ref (the storage rule);
 *   <li>n is the latest token granted for the resource (the sequencer rule: a successor's grant fences
 *       the old holder before the successor writes);
 *   <li>the update discards only commits written under n: a fast-forward or creation always passes;
 *       otherwise the tip when n first wrote to the ref (its base) must still be an ancestor of the new
 *       tip, and a delete needs a ref created under n.
 * </ol>
 *
 * <p>A tokenless push to a fenced ref follows the pusher's {@link PusherPolicy}; pushers matching an
 * agent pattern always need a token, so dropping {@code -o fence=} is never a way around the fence.
 *
 * <p>Git compares each ref's old id under the ref lock after the hook, so of two pushes admitted from
 * the same base only one lands; the record written here may then be ahead of the ref. That is safe:
 * tokens only go up, and the next push from the loser's holder is judged against the real old id.
 *
 * <p>Stateless and thread-safe.
 */
public final class Admission {

    /** The decision plus the writes and ledger events that make it so. */
    public record Plan(Verdict verdict, List<ResourceWrite> writes, List<LedgerEvent> events) {}

    /**
     * How long an admitted push counts as in flight: a push under the same token from another base is
     * refused as contended for this long, so two racing pushes cannot both be recorded.
     */
    static final java.time.Duration IN_FLIGHT = java.time.Duration.ofSeconds(30);

    /** Ancestry for a caller that has no repository: it knows nothing, so nothing counts as a fast-forward. */
    public static final Ancestry NO_ANCESTRY = new Ancestry() {
        @Override
        public boolean isAncestor(String ancestor, String descendant) {
            throw new InvalidInputException("no repository to tell ancestry from");
        }
    };

    private Admission() {}

    private static boolean sameId(String a, String b) {
        return ObjectIds.isZero(a) ? ObjectIds.isZero(b) : a.equals(b);
    }

    /** As {@link #decide(PushAttempt, Map, StoreIdentity, FencePolicy, Ancestry, Instant, Map, Proofs)} with no repository record and the JCE's MAC. */
    public static Plan decide(
            PushAttempt push,
            Map<String, ResourceState> states,
            StoreIdentity identity,
            FencePolicy policy,
            Ancestry ancestry,
            Instant now) {
        return decide(push, states, identity, policy, ancestry, now, Map.of(), Proofs.standard());
    }

    /**
     * Decides a push.
     *
     * @param states snapshot of every fenced ref's resource (must contain each)
     * @param identity the store's current identity (for proofs and the counter floor)
     * @param now the time recorded in events and tips
     * @param marks the repository's own record, by resource (resources it has none for are absent)
     * @param proofs checks the push's proof
     */
    public static Plan decide(
            PushAttempt push,
            Map<String, ResourceState> states,
            StoreIdentity identity,
            FencePolicy policy,
            Ancestry ancestry,
            Instant now,
            Map<String, AcceptedMark> marks,
            Proofs proofs) {
        List<RefDecision> decisions = new ArrayList<>();
        List<ResourceWrite> writes = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        for (RefUpdate u : push.updates()) {
            if (!policy.isFenced(u.ref())) {
                decisions.add(new RefDecision.Untouched(u));
                continue;
            }
            String resource = Resources.forRef(push.repoId(), u.ref());
            ResourceState s = states.get(resource);
            if (s == null) {
                throw new InternalException("no snapshot for " + resource);
            }
            AcceptedMark mark = marks.get(resource);
            Step step = push.options().token().isPresent()
                    ? withToken(push, u, resource, s, identity, policy, ancestry, now, mark, proofs)
                    : tokenless(push, u, resource, s, identity, policy, ancestry, now, mark);
            decisions.add(step.decision);
            if (step.write != null) {
                writes.add(step.write);
            }
            if (step.decision instanceof RefDecision.Admitted a && a.warning() != null) {
                warnings.add(a.warning());
            }
        }
        Verdict verdict = new Verdict(decisions, warnings);
        return new Plan(verdict, verdict.accepted() ? writes : List.of(), events(push, verdict, now));
    }

    /**
     * Decides a push when the store cannot be reached. Refs outside the fenced patterns pass untouched.
     * With {@code on-store-down = reject} (and always when the hook's server cannot be reached: {@link
     * FencePolicy#failingClosed()}) every fenced ref is refused alike, {@code token=0}, {@link
     * Reason#STORE_DOWN}: nothing can be admitted, so the pusher and the options change nothing, and a hook
     * that cannot ask Java (the curl shim) prints the same machine lines from the fenced patterns alone.
     * With {@code accept}: pushes carrying a token and pushers that need one are refused; tokenless pushes
     * the policy would let through are accepted for creations and fast-forwards of fenced refs only, since
     * without the store nobody can tell which commits a rewrite or delete would discard. Nothing can be
     * recorded.
     *
     * @param ancestry answers whether an update is a fast-forward; any failure to answer counts as "no"
     */
    public static Verdict storeDown(PushAttempt push, FencePolicy policy, String problem, Ancestry ancestry) {
        List<RefDecision> decisions = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        for (RefUpdate u : push.updates()) {
            if (!policy.isFenced(u.ref())) {
                decisions.add(new RefDecision.Untouched(u));
                continue;
            }
            String resource = Resources.forRef(push.repoId(), u.ref());
            if (!policy.acceptUnfencedWhenStoreDown()) {
                decisions.add(refuse(
                        u,
                        resource,
                        0,
                        0,
                        Reason.STORE_DOWN,
                        null,
                        null,
                        "the fence store is unavailable (" + problem
                                + "); fenced pushes are refused until it is back"));
                continue;
            }
            String pusher = push.actor().pusher();
            boolean needsToken = push.options().token().isPresent()
                    || policy.isAgent(pusher)
                    || policy.policyFor(pusher) == PusherPolicy.REJECT;
            if (needsToken && push.options().token().isEmpty()) {
                decisions.add(
                        refuse(u, resource, 0, 0, Reason.TOKEN_REQUIRED, null, null, tokenRequiredDetail(pusher)));
            } else if (needsToken || !createsOrFastForwards(u, ancestry)) {
                decisions.add(refuse(
                        u,
                        resource,
                        push.options().token().orElse(0),
                        0,
                        Reason.STORE_DOWN,
                        null,
                        null,
                        "the fence store is unavailable (" + problem + "); "
                                + (needsToken
                                        ? "fenced pushes are refused until it is back"
                                        : "a rewrite or delete of a fenced ref is refused until it is back"
                                                + " (creations and fast-forwards are accepted)")));
            } else {
                String warning = "warning: fence store unavailable (" + problem + "); " + u.ref()
                        + " accepted without a token check (on-store-down = accept); outstanding leases were not bumped";
                decisions.add(new RefDecision.Admitted(u, resource, Reason.ALLOWED, 0, warning));
                warnings.add(warning);
            }
        }
        return new Verdict(decisions, warnings);
    }

    private record Step(RefDecision decision, ResourceWrite write) {}

    /** True for a creation, or an update whose new tip contains the old one; false when that cannot be told. */
    private static boolean createsOrFastForwards(RefUpdate u, Ancestry ancestry) {
        switch (u.kind()) {
            case CREATE:
            case NONE:
                return true;
            case UPDATE:
                try {
                    return ancestry.isAncestor(u.oldId(), u.newId());
                } catch (RuntimeException e) {
                    return false;
                }
            default:
                return false;
        }
    }

    private static Step withToken(
            PushAttempt push,
            RefUpdate u,
            String resource,
            ResourceState s,
            StoreIdentity identity,
            FencePolicy policy,
            Ancestry ancestry,
            Instant now,
            AcceptedMark mark,
            Proofs proofs) {
        long n = push.options().token().getAsLong();
        String proof = push.options().proof();
        Refusal r = tokenRule(
                resource,
                u.ref(),
                "the push carried fence=" + n + " without fence-proof",
                n,
                proof,
                s,
                identity,
                mark,
                proofs);
        if (r != null) {
            return refused(u, resource, n, s, r.reason(), r.detail());
        }
        // From here on the proof is valid: the store did grant n to this holder.
        String holder = Proofs.holderOf(proof);
        if (!policy.mayPushFor(holder, push.actor().pusher())) {
            return refused(
                    u,
                    resource,
                    n,
                    s,
                    Reason.PUSHER_NOT_HOLDER,
                    "pusher '" + push.actor().pusher() + "' may not push for holder '" + holder
                            + "' (holder-pushers); a lease's proof is for its holder alone");
        }
        Tip last = s.tip();
        if (last != null
                && last.token() == n
                && !sameId(last.sha(), u.oldId())
                && last.at().isAfter(now.minus(IN_FLIGHT))) {
            // The same token was just admitted from another base: that push is landing (or just landed),
            // and git's own compare-and-swap would refuse one of the two anyway. Refusing here keeps the
            // ledger in step with the ref. Past IN_FLIGHT, the earlier admission is taken as not landed.
            return refused(
                    u,
                    resource,
                    n,
                    s,
                    Reason.CONTENDED,
                    "another push under token " + n + " (to " + ObjectIds.abbreviate(last.sha())
                            + ") was admitted moments ago from a different base; fetch, rebase onto it and push again");
        }
        boolean baseIsMine = s.baseToken() == n && s.baseSha() != null;
        // The commits between the base and the old tip are n's own only when the store saw n write that
        // tip. A ref moved with no record (a fast-forward accepted while the store was down, a branch
        // created again) holds commits no token wrote, and n may not discard them either.
        boolean oldTipIsMine = baseIsMine && recordedUnder(s, n, u, ancestry);
        switch (u.kind()) {
            case DELETE:
                if (!(oldTipIsMine && ObjectIds.isZero(s.baseSha()))) {
                    return refused(
                            u,
                            resource,
                            n,
                            s,
                            Reason.FOREIGN_OVERWRITE,
                            "deleting " + u.ref() + " would discard commits not written under token " + n);
                }
                break;
            case UPDATE:
                String mustContain = oldTipIsMine ? s.baseSha() : u.oldId();
                if (!ObjectIds.isZero(mustContain)
                        && !extendsOwnTip(s, n, u, ancestry)
                        && !ancestry.isAncestor(mustContain, u.newId())) {
                    return refused(
                            u,
                            resource,
                            n,
                            s,
                            Reason.FOREIGN_OVERWRITE,
                            "the push rewrites " + u.ref() + " and would discard commits not written under token " + n
                                    + " (the new tip does not contain " + ObjectIds.abbreviate(mustContain) + ")");
                }
                break;
            case CREATE:
            case NONE:
                break;
        }
        // Where the old tip is not one n was seen to write, the base moves up to it: what n may rewrite
        // from now on starts there.
        String base = oldTipIsMine ? s.baseSha() : (u.kind() == RefUpdate.Kind.CREATE ? ObjectIds.ZERO : u.oldId());
        ResourceWrite w = new ResourceWrite(
                resource,
                s.version(),
                s.latestGranted(),
                Math.max(n, s.highestAccepted()),
                false,
                n,
                base,
                u.kind() == RefUpdate.Kind.DELETE ? null : u.newId(),
                new Tip(u.newId(), n, holder, push.actor().pusher(), now),
                identity.generation());
        return new Step(new RefDecision.Admitted(u, resource, Reason.ACCEPTED, n, null), w);
    }

    /** Why a token may not write, as {@link #tokenRule} finds it. */
    record Refusal(Reason reason, String detail) {}

    /**
     * The token rule every fenced write obeys, whatever it writes (a push, a migration, a shared file):
     * the proof is valid for (resource, n, generation); the store is not behind the writer's own record;
     * n is at or above every token that has written ({@code highestAccepted} and the record); n is the
     * latest token granted (the sequencer rule), granted to the proof's holder and not released.
     *
     * @param resource the resource the proof must be for
     * @param what what is written, for the messages (a ref name, a resource name)
     * @param noProof the first words of the message when the write carried no proof
     * @param mark the writer's own record of accepted tokens for the resource, or null when it keeps none
     * @param proofs checks the proof
     * @return null when n may write, else why not
     */
    static Refusal tokenRule(
            String resource,
            String what,
            String noProof,
            long n,
            String proof,
            ResourceState s,
            StoreIdentity identity,
            AcceptedMark mark,
            Proofs proofs) {
        if (proof == null) {
            return new Refusal(Reason.BAD_PROOF, noProof + "; a token number alone is not a credential");
        }
        switch (proofs.verify(identity, resource, n, proof)) {
            case OLD_GENERATION:
                return new Refusal(
                        Reason.OLD_GENERATION,
                        "the token was granted before the fence store lost or rolled back its data; it is void");
            case OLD_FORMAT:
                return new Refusal(Reason.OLD_GENERATION, Proofs.OLD_FORMAT_DETAIL);
            case BAD:
                return new Refusal(Reason.BAD_PROOF, "fence-proof is not the proof of token " + n + " on " + what);
            case VALID:
                break;
        }
        String holder = Proofs.holderOf(proof);
        String behind = storeBehind(what, s, identity, mark);
        if (behind != null) {
            return new Refusal(Reason.STORE_ROLLED_BACK, behind);
        }
        if (n < s.highestAccepted()) {
            return new Refusal(Reason.STALE_TOKEN, "token " + s.highestAccepted() + " has already written to " + what);
        }
        if (mark != null && n < mark.token()) {
            return new Refusal(
                    Reason.STALE_TOKEN,
                    "token " + mark.token() + " has already written to " + what + " (this repository's own record)");
        }
        if (mark != null && n == mark.token() && !holder.equals(mark.holder())) {
            // A mark without a holder is a bump's number, which no grant ever carries: a store that grants
            // it has counted again after losing data, like one that grants a holder's token to another.
            return new Refusal(
                    Reason.DUPLICATE_TOKEN,
                    "token " + n + " already wrote to " + what
                            + (mark.holder() == null ? " without a lease (a bump)" : " for " + mark.holder())
                            + ", not for " + holder
                            + " (this repository's own record): the store granted one token twice after losing data");
        }
        if (n != s.latestGranted()) {
            return new Refusal(
                    n < s.latestGranted() ? Reason.SUPERSEDED : Reason.BAD_PROOF,
                    n < s.latestGranted() ? null : "token " + n + " was never granted by this store");
        }
        Lease lease = s.lease();
        if (lease != null && lease.token() == n && !lease.holder().equals(holder)) {
            return new Refusal(
                    Reason.DUPLICATE_TOKEN,
                    "the store granted token " + n + " to " + lease.holder() + ", not to " + holder
                            + ": one token number was granted twice after the store lost data");
        }
        if (lease != null && lease.token() == n && lease.released()) {
            return new Refusal(
                    Reason.RELEASED, "the lease of token " + n + " was released; a released token writes nothing");
        }
        return null;
    }

    /**
     * Why the store is not trusted, or null: the store's counter (or its generation's floor, which the next
     * grant starts above) is below the token the writer's own record last admitted: the store lost or rolled
     * back data without starting a new generation, and whatever it says about this resource is not trusted.
     */
    private static String storeBehind(String what, ResourceState s, StoreIdentity identity, AcceptedMark mark) {
        if (mark == null || Math.max(s.latestGranted(), identity.floor()) >= mark.token()) {
            return null;
        }
        return "the lease store is behind this repository: token " + mark.token() + " was admitted on " + what
                + " but the store's latest grant is " + s.latestGranted() + ". It was restored or failed over"
                + " without fence noticing. An admin should start a new generation (restart"
                + " the Redis server, or delete the SQLite store's meta row; see README, Store faults);"
                + " then acquire a new lease";
    }

    /**
     * True when the update's old tip is where the store last saw the ref under n, or in that place's
     * history: its base, the tip last admitted under n or an ancestor of it (an admission that did not land
     * leaves the ref at an earlier tip of n's), or, on a state without a recorded tip, the last token-written
     * tip, which only n can have written since its base while n is current. Every admission under n keeps
     * the old tip unless this holds, and moves the base up to it, so what lies between the base and such a
     * tip is n's own. Only a rewrite or delete from somewhere else asks git (once).
     */
    private static boolean recordedUnder(ResourceState s, long n, RefUpdate u, Ancestry ancestry) {
        String sha = u.oldId();
        if (sameId(s.baseSha(), sha)) {
            return true;
        }
        Tip tip = s.tip();
        if (tip == null) {
            return sameId(s.lastTokenWriteSha(), sha);
        }
        if (tip.token() != n) {
            return false;
        }
        if (sameId(tip.sha(), sha)) {
            return true;
        }
        return u.kind() != RefUpdate.Kind.NONE
                && !ObjectIds.isZero(sha)
                && !ObjectIds.isZero(tip.sha())
                && ancestry.isAncestor(sha, tip.sha());
    }

    /**
     * True when the ref is at the tip that token {@code n} itself wrote and the update is known, without
     * asking, to be a fast-forward from it. The base was checked to be in that tip when {@code n} wrote it,
     * so it is in the new tip too: the usual question (is the base in the new tip?), which may need a
     * walk through many commits or a round trip to the pusher's side, needs no answer.
     */
    private static boolean extendsOwnTip(ResourceState s, long n, RefUpdate u, Ancestry ancestry) {
        Tip tip = s.tip();
        return tip != null
                && tip.token() == n
                && s.baseToken() == n
                && sameId(tip.sha(), u.oldId())
                && Boolean.TRUE.equals(ancestry.knownAncestor(u.oldId(), u.newId()));
    }

    private static Step tokenless(
            PushAttempt push,
            RefUpdate u,
            String resource,
            ResourceState s,
            StoreIdentity identity,
            FencePolicy policy,
            Ancestry ancestry,
            Instant now,
            AcceptedMark mark) {
        String pusher = push.actor().pusher();
        PusherPolicy p = policy.policyFor(pusher);
        if (policy.isAgent(pusher) || p == PusherPolicy.REJECT) {
            return refused(u, resource, 0, s, Reason.TOKEN_REQUIRED, tokenRequiredDetail(pusher));
        }
        String behind = storeBehind(u.ref(), s, identity, mark);
        if (behind != null) {
            return refused(u, resource, 0, s, Reason.STORE_ROLLED_BACK, behind);
        }
        Tip tip = new Tip(u.newId(), Tokens.NONE, null, pusher, now);
        if (p == PusherPolicy.ALLOW) {
            return new Step(
                    new RefDecision.Admitted(u, resource, Reason.ALLOWED, 0, null),
                    allowWrite(resource, u, s, identity, tip));
        }
        String tokenWritten = s.lastTokenWriteSha();
        boolean discards =
                switch (u.kind()) {
                    case DELETE -> !ObjectIds.isZero(tokenWritten);
                    case UPDATE -> !ObjectIds.isZero(tokenWritten) && !ancestry.isAncestor(tokenWritten, u.newId());
                    case CREATE, NONE -> false;
                };
        if (discards && p == PusherPolicy.BUMP) {
            return refused(
                    u,
                    resource,
                    0,
                    s,
                    Reason.TOKENLESS_OVERWRITE,
                    "a push without a token may not discard commits written under a token ("
                            + ObjectIds.abbreviate(tokenWritten) + "); push on top of them instead");
        }
        ResourceWrite w = bumpWrite(resource, s, identity, tip, discards);
        return new Step(
                new RefDecision.Admitted(
                        u, resource, Reason.BUMPED, w.latestGranted(), supersededLine(s, u.ref(), now)),
                w);
    }

    /**
     * What an admitted {@code allow} push writes: the tip, and the base moved up to it. What an allowed
     * pusher writes is foreign to every token: the base moves up to it, so a later rewrite under the base's
     * token must keep it (rule 4), and a delete under that token is no longer the delete of a branch it
     * created. With no base (no token wrote here yet), a rewrite must contain the ref's tip anyway.
     */
    static ResourceWrite allowWrite(String resource, RefUpdate u, ResourceState s, StoreIdentity identity, Tip tip) {
        boolean hasBase = s.baseSha() != null && s.baseToken() != Tokens.NONE;
        String base = hasBase && u.kind() != RefUpdate.Kind.DELETE ? u.newId() : null;
        return new ResourceWrite(
                resource,
                s.version(),
                s.latestGranted(),
                s.highestAccepted(),
                false,
                base == null ? Tokens.NONE : s.baseToken(),
                base,
                s.lastTokenWriteSha(),
                tip,
                identity.generation());
    }

    /**
     * What an admitted tokenless {@code bump} writes: the counter above every token granted and above the
     * push's time ({@link StoreIdentity#nextToken}; its {@link ResourceWrite#latestGranted()} is the bumped
     * token), the lease dropped, the tip; the last
     * token-written tip is forgotten when the push discards it.
     */
    static ResourceWrite bumpWrite(
            String resource, ResourceState s, StoreIdentity identity, Tip tip, boolean discards) {
        long bumped =
                identity.nextToken(s.latestGranted(), tip == null ? 0 : tip.at().toEpochMilli());
        return new ResourceWrite(
                resource,
                s.version(),
                bumped,
                Math.max(bumped, s.highestAccepted()),
                true,
                Tokens.NONE,
                null,
                discards ? null : s.lastTokenWriteSha(),
                tip,
                identity.generation());
    }

    /** What the pusher is told when its bump supersedes a live lease on {@code ref}, or null when none. */
    static String supersededLine(ResourceState s, String ref, Instant now) {
        return s.lease() != null && s.lease().isLive(now)
                ? "fence: this push superseded " + s.lease().holder() + "'s lease on " + ref + " (token "
                        + s.lease().token() + " is now stale)"
                : null;
    }

    private static String tokenRequiredDetail(String pusher) {
        return "pusher '" + pusher + "' must push with a lease: -o fence=<token> -o fence-proof=<proof>";
    }

    private static Step refused(RefUpdate u, String resource, long n, ResourceState s, Reason reason, String detail) {
        String holder = s.lease() != null ? s.lease().holder() : null;
        return new Step(refuse(u, resource, n, s.latestGranted(), reason, holder, s.tip(), detail), null);
    }

    private static RefDecision.Refused refuse(
            RefUpdate u, String resource, long n, long current, Reason reason, String holder, Tip tip, String detail) {
        return new RefDecision.Refused(u, new Fenced(resource, u.ref(), n, current, reason, holder, tip, detail));
    }

    private static List<LedgerEvent> events(PushAttempt push, Verdict verdict, Instant now) {
        List<LedgerEvent> events = new ArrayList<>();
        boolean accepted = verdict.accepted();
        for (RefDecision d : verdict.decisions()) {
            RefUpdate u = d.update();
            if (d instanceof RefDecision.Admitted a) {
                EventType type = !accepted
                        ? EventType.REJECT
                        : switch (a.reason()) {
                            case BUMPED -> EventType.BUMP;
                            case ALLOWED -> EventType.ALLOW;
                            default -> EventType.ACCEPT;
                        };
                Reason reason = accepted ? a.reason() : Reason.OTHER_REF_REJECTED;
                events.add(pushEvent(
                        push,
                        u,
                        a.resource(),
                        a.reason() == Reason.ACCEPTED ? provenHolder(push) : null,
                        type,
                        a.token(),
                        reason,
                        null,
                        now));
            } else if (d instanceof RefDecision.Refused r) {
                Fenced f = r.fenced();
                // Every refusal but these comes after the proof verified, so the holder it names is proven;
                // a token without a valid proof proves nothing about who holds it: no holder is named.
                boolean proven = f.reason() != Reason.BAD_PROOF && f.reason() != Reason.OLD_GENERATION;
                events.add(pushEvent(
                        push,
                        u,
                        f.resource(),
                        proven ? provenHolder(push) : null,
                        EventType.REJECT,
                        f.token(),
                        f.reason(),
                        f.detail(),
                        now));
            }
        }
        return events;
    }

    /**
     * The holder a token push's proof names (null for a tokenless push): the ledger records who the push
     * was made for from the proof itself, not from the store's lease, which after a data loss may name a
     * holder the token was granted to a second time.
     */
    private static String provenHolder(PushAttempt push) {
        return push.options().token().isPresent()
                ? Proofs.holderOf(push.options().proof())
                : null;
    }

    /** A push event for the ledger. */
    public static LedgerEvent pushEvent(
            PushAttempt push,
            RefUpdate u,
            String resource,
            String holder,
            EventType type,
            long token,
            Reason reason,
            String detail,
            Instant now) {
        return new LedgerEvent(
                0,
                now,
                type,
                resource,
                push.repoId(),
                u.ref(),
                holder,
                push.actor().pusher(),
                token,
                u.oldId(),
                u.newId(),
                reason.code(),
                detail);
    }
}
