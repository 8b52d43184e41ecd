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
 *   <li>the proof is valid for (the ref's resource, n, the store's generation);
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
    public static final java.time.Duration IN_FLIGHT = java.time.Duration.ofSeconds(30);

    private Admission() {}

    private static boolean sameId(String a, String b) {
        return ObjectIds.isZero(a) ? ObjectIds.isZero(b) : a.equals(b);
    }

    /**
     * Decides a push.
     *
     * @param states snapshot of every fenced ref's resource (must contain each)
     * @param identity the store's current identity (for proofs and the counter floor)
     * @param now the time recorded in events and tips
     */
    public static Plan decide(
            PushAttempt push,
            Map<String, ResourceState> states,
            StoreIdentity identity,
            FencePolicy policy,
            Ancestry ancestry,
            Instant now) {
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
            Step step = push.options().token().isPresent()
                    ? withToken(push, u, resource, s, identity, ancestry, now)
                    : tokenless(push, u, resource, s, identity, policy, ancestry, now);
            decisions.add(step.decision);
            if (step.write != null) {
                writes.add(step.write);
            }
            if (step.decision instanceof RefDecision.Admitted a && a.warning() != null) {
                warnings.add(a.warning());
            }
        }
        Verdict verdict = new Verdict(decisions, warnings);
        return new Plan(verdict, verdict.accepted() ? writes : List.of(), events(push, verdict, states, now));
    }

    /**
     * Decides a push when the store cannot be reached: pushes carrying a token and refs that need a token
     * are refused ({@link Reason#STORE_DOWN}, fail closed); tokenless pushes that the policy would let
     * through follow {@code on-store-down}. Nothing can be recorded.
     */
    public static Verdict storeDown(PushAttempt push, FencePolicy policy, String problem) {
        List<RefDecision> decisions = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        for (RefUpdate u : push.updates()) {
            if (!policy.isFenced(u.ref())) {
                decisions.add(new RefDecision.Untouched(u));
                continue;
            }
            String resource = Resources.forRef(push.repoId(), u.ref());
            String pusher = push.actor().pusher();
            boolean needsToken = push.options().token().isPresent()
                    || policy.isAgent(pusher)
                    || policy.policyFor(pusher) == PusherPolicy.REJECT;
            if (needsToken && push.options().token().isEmpty()) {
                decisions.add(
                        refuse(u, resource, 0, 0, Reason.TOKEN_REQUIRED, null, null, tokenRequiredDetail(pusher)));
            } else if (needsToken || !policy.acceptUnfencedWhenStoreDown()) {
                decisions.add(refuse(
                        u,
                        resource,
                        push.options().token().orElse(0),
                        0,
                        Reason.STORE_DOWN,
                        null,
                        null,
                        "the fence store is unavailable (" + problem
                                + "); fenced pushes are refused until it is back"));
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

    private static Step withToken(
            PushAttempt push,
            RefUpdate u,
            String resource,
            ResourceState s,
            StoreIdentity identity,
            Ancestry ancestry,
            Instant now) {
        long n = push.options().token().getAsLong();
        String proof = push.options().proof();
        if (proof == null) {
            return refused(
                    u,
                    resource,
                    n,
                    s,
                    Reason.BAD_PROOF,
                    "the push carried fence=" + n + " without fence-proof; a token number alone is not a credential");
        }
        switch (Proofs.verify(identity, resource, n, proof)) {
            case OLD_GENERATION:
                return refused(
                        u,
                        resource,
                        n,
                        s,
                        Reason.OLD_GENERATION,
                        "the token was granted before the fence store lost its data; it is void");
            case BAD:
                return refused(
                        u,
                        resource,
                        n,
                        s,
                        Reason.BAD_PROOF,
                        "fence-proof is not the proof of token " + n + " on " + u.ref());
            case VALID:
                break;
        }
        if (n < s.highestAccepted()) {
            return refused(
                    u,
                    resource,
                    n,
                    s,
                    Reason.STALE_TOKEN,
                    "token " + s.highestAccepted() + " has already written to " + u.ref());
        }
        if (n != s.latestGranted()) {
            return refused(
                    u,
                    resource,
                    n,
                    s,
                    n < s.latestGranted() ? Reason.SUPERSEDED : Reason.BAD_PROOF,
                    n < s.latestGranted() ? null : "token " + n + " was never granted by this store");
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
        switch (u.kind()) {
            case DELETE:
                if (!(baseIsMine && ObjectIds.isZero(s.baseSha()))) {
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
                String mustContain = baseIsMine ? s.baseSha() : u.oldId();
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
        String holder = s.lease() != null && s.lease().token() == n ? s.lease().holder() : null;
        String base = baseIsMine ? s.baseSha() : (u.kind() == RefUpdate.Kind.CREATE ? ObjectIds.ZERO : u.oldId());
        ResourceWrite w = new ResourceWrite(
                resource,
                s.version(),
                s.latestGranted(),
                Math.max(n, s.highestAccepted()),
                false,
                n,
                base,
                u.kind() == RefUpdate.Kind.DELETE ? null : u.newId(),
                new Tip(u.newId(), n, holder, push.actor().pusher(), now));
        return new Step(new RefDecision.Admitted(u, resource, Reason.ACCEPTED, n, null), w);
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
            Instant now) {
        String pusher = push.actor().pusher();
        PusherPolicy p = policy.policyFor(pusher);
        if (policy.isAgent(pusher) || p == PusherPolicy.REJECT) {
            return refused(u, resource, 0, s, Reason.TOKEN_REQUIRED, tokenRequiredDetail(pusher));
        }
        Tip tip = new Tip(u.newId(), Tokens.NONE, null, pusher, now);
        if (p == PusherPolicy.ALLOW) {
            ResourceWrite w = new ResourceWrite(
                    resource,
                    s.version(),
                    s.latestGranted(),
                    s.highestAccepted(),
                    false,
                    s.baseToken(),
                    s.baseSha(),
                    s.lastTokenWriteSha(),
                    tip);
            return new Step(new RefDecision.Admitted(u, resource, Reason.ALLOWED, 0, null), w);
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
        long bumped = Math.max(s.latestGranted(), identity.floor()) + 1;
        ResourceWrite w = new ResourceWrite(
                resource,
                s.version(),
                bumped,
                Math.max(bumped, s.highestAccepted()),
                true,
                Tokens.NONE,
                null,
                discards ? null : tokenWritten,
                tip);
        String warning = s.lease() != null && s.lease().isLive(now)
                ? "fence: this push superseded " + s.lease().holder() + "'s lease on " + u.ref() + " (token "
                        + s.lease().token() + " is now stale)"
                : null;
        return new Step(new RefDecision.Admitted(u, resource, Reason.BUMPED, bumped, warning), w);
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

    private static List<LedgerEvent> events(
            PushAttempt push, Verdict verdict, Map<String, ResourceState> states, Instant now) {
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
                        holderOf(states.get(a.resource()), a.token()),
                        type,
                        a.token(),
                        reason,
                        null,
                        now));
            } else if (d instanceof RefDecision.Refused r) {
                Fenced f = r.fenced();
                // A token without its proof proves nothing about who holds it: no holder is named.
                boolean proven = f.reason() != Reason.BAD_PROOF && f.reason() != Reason.OLD_GENERATION;
                events.add(pushEvent(
                        push,
                        u,
                        f.resource(),
                        proven ? holderOf(states.get(f.resource()), f.token()) : null,
                        EventType.REJECT,
                        f.token(),
                        f.reason(),
                        f.detail(),
                        now));
            }
        }
        return events;
    }

    /** The holder that {@code token} was granted to, when the snapshot still knows it. */
    private static String holderOf(ResourceState s, long token) {
        return s != null
                        && token != Tokens.NONE
                        && s.lease() != null
                        && s.lease().token() == token
                ? s.lease().holder()
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
