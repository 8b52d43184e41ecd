package dev.fence.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Only pushes that land supersede or count. The pre-receive hook decides a push before git updates a
 * ref, and a later hook (gitolite's {@code update}, an admin's) or git's own compare-and-swap of the
 * ref's old id may still refuse the update. On a host where fence learns what landed (its post-receive
 * hook, and its hooks' look at the refs before judging the next push), a decision is therefore applied
 * in two parts:
 *
 * <ul>
 *   <li>at the decision, what keeps the fence safe whatever happens next, because tokens only go up: a
 *       token push raises the ref's highest accepted token and its base ({@link #deferred});
 *   <li>when the update is seen to land ({@link #land}), what says it happened: the last write (the
 *       tip), the last token-written tip, and for a tokenless push the bump that supersedes the live
 *       lease. An admitted update seen not to land gets an {@link EventType#UNLANDED} event instead
 *       ({@link #unlanded}) and changes nothing more.
 * </ul>
 *
 * <p>Between decision and landing git's compare-and-swap decides between racing pushes; the hooks apply
 * a landed update before they judge the next push to its ref, so no push is judged against a state that
 * misses one that landed.
 *
 * <p>Stateless and thread-safe.
 */
public final class Landings {
    private static final int MAX_ATTEMPTS = 8;

    private Landings() {}

    /**
     * An admitted ref update whose landing is not known yet.
     *
     * @param reason {@link Reason#ACCEPTED}, {@link Reason#BUMPED} or {@link Reason#ALLOWED}
     * @param resource the ref's resource
     * @param repoId the repo id
     * @param update the ref update as pushed
     * @param token the push's token (0 for a tokenless push)
     * @param holder the holder the proof names, or null
     * @param pusher the host's pusher
     * @param decidedAt when the hook admitted it
     */
    public record Pending(
            Reason reason,
            String resource,
            String repoId,
            RefUpdate update,
            long token,
            String holder,
            String pusher,
            Instant decidedAt) {
        public Pending {
            if (reason != Reason.ACCEPTED && reason != Reason.BUMPED && reason != Reason.ALLOWED) {
                throw new IllegalArgumentException("not an admission: " + reason);
            }
        }
    }

    /** What landing some updates did: lines for the pusher, and the bumps for the repository's record. */
    public record Landed(List<String> lines, List<AcceptedMark> marks) {}

    /**
     * The pending landings of an accepted verdict's admitted updates.
     *
     * @param holder the holder the push's proof names, or null
     */
    public static List<Pending> pendingOf(PushAttempt push, Verdict verdict, String holder, Instant now) {
        List<Pending> out = new ArrayList<>();
        for (RefDecision d : verdict.decisions()) {
            if (d instanceof RefDecision.Admitted a
                    && (a.reason() == Reason.ACCEPTED || a.reason() == Reason.BUMPED || a.reason() == Reason.ALLOWED)) {
                out.add(new Pending(
                        a.reason(),
                        a.resource(),
                        push.repoId(),
                        a.update(),
                        a.reason() == Reason.ACCEPTED ? a.token() : Tokens.NONE,
                        a.reason() == Reason.ACCEPTED ? holder : null,
                        push.actor().pusher(),
                        now));
            }
        }
        return out;
    }

    /**
     * The part of an admission plan applied at the decision when landing is applied later: a token push's
     * highest accepted token and base, against the snapshot's version (so that a grant in between still
     * makes the push be judged again); nothing for a tokenless push. Warnings that claim a supersession
     * are reworded to say it happens when the push lands.
     *
     * @param states the snapshot the plan was decided from
     */
    public static Admission.Plan deferred(Admission.Plan plan, Map<String, ResourceState> states) {
        Map<String, ResourceWrite> byResource = new HashMap<>();
        for (ResourceWrite w : plan.writes()) {
            byResource.put(w.resource(), w);
        }
        List<ResourceWrite> writes = new ArrayList<>();
        List<RefDecision> decisions = new ArrayList<>();
        List<String> warnings = new ArrayList<>(plan.verdict().warnings());
        for (RefDecision d : plan.verdict().decisions()) {
            if (!(d instanceof RefDecision.Admitted a)) {
                decisions.add(d);
                continue;
            }
            ResourceWrite w = byResource.get(a.resource());
            ResourceState s = states.get(a.resource());
            if (a.reason() == Reason.ACCEPTED && w != null && s != null) {
                writes.add(new ResourceWrite(
                        w.resource(),
                        w.expectedVersion(),
                        w.latestGranted(),
                        w.highestAccepted(),
                        false,
                        w.baseToken(),
                        w.baseSha(),
                        s.lastTokenWriteSha(),
                        s.tip(),
                        w.generation()));
            } else if (a.reason() != Reason.BUMPED && a.reason() != Reason.ALLOWED && w != null) {
                writes.add(w);
            }
            if (a.reason() == Reason.BUMPED && a.warning() != null) {
                String lands = s != null && s.lease() != null
                        ? "fence: this push supersedes " + s.lease().holder() + "'s lease on "
                                + a.update().ref() + " when it lands (token "
                                + s.lease().token() + " goes stale then)"
                        : null;
                int i = warnings.indexOf(a.warning());
                if (i >= 0) {
                    warnings.set(i, lands);
                }
                decisions.add(new RefDecision.Admitted(a.update(), a.resource(), a.reason(), a.token(), lands));
            } else {
                decisions.add(a);
            }
        }
        // A loop, not removeIf with a method reference: this runs on the hook's path, which links no lambda.
        for (java.util.Iterator<String> i = warnings.iterator(); i.hasNext(); ) {
            if (i.next() == null) {
                i.remove();
            }
        }
        return new Admission.Plan(new Verdict(decisions, warnings), writes, plan.events());
    }

    /**
     * Applies updates that landed: each one's last write and, for a tokenless push, the bump that
     * supersedes the live lease (as the admission rule's bump does), with a {@link EventType#LANDED}
     * event. Up to a thousand at a time in one compare-and-set when no grant or push changed their
     * resources since one snapshot of them; otherwise each resource in its own, judged again from a fresh
     * snapshot when a grant came in between.
     *
     * @param ancestry answers whether the last token-written tip is kept by a tokenless push
     * @param now the landing's time
     * @throws StoreUnavailableException when the store cannot be reached
     */
    public static Landed land(
            LeaseStore store, List<Pending> landed, Ancestry ancestry, Instant now, Supplier<StoreIdentity> candidate) {
        return land(store, landed, List.of(), ancestry, now, candidate);
    }

    /**
     * As {@link #land(LeaseStore, List, Ancestry, Instant, Supplier)}, where {@code landedPast} are those of
     * {@code landed} whose ref was found past their new tip rather than at it: such a token write is
     * recorded as landed, but does not replace a last token-written tip that already contains it (a later
     * write of the same holder landed first, and this one would rewind the record to an older tip).
     */
    public static Landed land(
            LeaseStore store,
            List<Pending> landed,
            List<Pending> landedPast,
            Ancestry ancestry,
            Instant now,
            Supplier<StoreIdentity> candidate) {
        List<String> lines = new ArrayList<>();
        List<AcceptedMark> marks = new ArrayList<>();
        // A push of thousands of branches lands in a few round trips instead of two per branch; the landings
        // are the ones each would make alone, from the same kind of snapshot.
        if (landed.size() > 1 && distinctResources(landed)) {
            for (int from = 0; from < landed.size(); from += MOST_PER_COMMIT) {
                List<Pending> some = landed.subList(from, Math.min(landed.size(), from + MOST_PER_COMMIT));
                if (!landTogether(store, some, landedPast, ancestry, now, candidate, lines, marks)) {
                    // A grant or push changed one of them since the snapshot: nothing of them was written.
                    landAlone(store, some, landedPast, ancestry, now, candidate, lines, marks);
                }
            }
        } else {
            landAlone(store, landed, landedPast, ancestry, now, candidate, lines, marks);
        }
        return new Landed(lines, marks);
    }

    /**
     * The most landings one compare-and-set carries. A commit's time on the store grows with its writes
     * (on Redis about 50 ms per thousand landings, the script blocking the server meanwhile), and a commit
     * that outlasts the store's timeout fails as the store being down, not as a conflict: nothing falls
     * back to landing one at a time, and a Redis reply that times out after the script wrote everything
     * leaves the landings pending, to be landed again. A push of tens of thousands of branches (or the
     * backlog of several whose post-receive did not run) would otherwise fail to land every time.
     */
    private static final int MOST_PER_COMMIT = 1_000;

    /**
     * Lands {@code some} (of distinct resources) from one snapshot in one compare-and-set; false, with
     * nothing written or reported, when one of them changed since the snapshot.
     */
    private static boolean landTogether(
            LeaseStore store,
            List<Pending> some,
            List<Pending> landedPast,
            Ancestry ancestry,
            Instant now,
            Supplier<StoreIdentity> candidate,
            List<String> lines,
            List<AcceptedMark> marks) {
        List<String> resources = new ArrayList<>(some.size());
        for (Pending p : some) {
            resources.add(p.resource());
        }
        var read = store.identityAndSnapshot(resources, candidate);
        List<Step> steps = new ArrayList<>(some.size());
        List<ResourceWrite> writes = new ArrayList<>(some.size());
        List<LedgerEvent> events = new ArrayList<>(some.size());
        for (Pending p : some) {
            Step step = step(p, read.states().get(p.resource()), read.identity(), landedPast, ancestry, now);
            steps.add(step);
            if (step.write() != null) {
                writes.add(step.write());
                events.add(step.event());
            }
        }
        if (!writes.isEmpty() && !(store.commit(writes, events) instanceof CommitResult.Committed)) {
            return false;
        }
        for (Step step : steps) {
            step.report(lines, marks);
        }
        return true;
    }

    /** Lands each of {@code landed} in its own compare-and-set, judged again from a fresh snapshot on a conflict. */
    private static void landAlone(
            LeaseStore store,
            List<Pending> landed,
            List<Pending> landedPast,
            Ancestry ancestry,
            Instant now,
            Supplier<StoreIdentity> candidate,
            List<String> lines,
            List<AcceptedMark> marks) {
        for (Pending p : landed) {
            for (int attempt = 0; ; attempt++) {
                var read = store.identityAndSnapshot(List.of(p.resource()), candidate);
                Step step = step(p, read.states().get(p.resource()), read.identity(), landedPast, ancestry, now);
                if (step.write() == null
                        || store.commit(List.of(step.write()), List.of(step.event()))
                                instanceof CommitResult.Committed) {
                    step.report(lines, marks);
                    break;
                }
                if (attempt + 1 >= MAX_ATTEMPTS) {
                    throw new StoreUnavailableException("other pushes and grants kept changing "
                            + p.update().ref()
                            + "; its landing was not recorded and is applied when the next push comes");
                }
            }
        }
    }

    /** True when no two of {@code landed} are of one resource (a write each, each against its own version). */
    private static boolean distinctResources(List<Pending> landed) {
        Set<String> seen = new HashSet<>();
        for (Pending p : landed) {
            if (!seen.add(p.resource())) {
                return false;
            }
        }
        return true;
    }

    /**
     * True when {@code stored}, a resource's last write, is the one landing {@code tip} writes: the same id,
     * token, holder and pusher, decided in the same millisecond (the stores and the pending record keep
     * milliseconds), which only the same pending update has.
     */
    private static boolean sameLanding(Tip stored, Tip tip) {
        return stored != null
                && stored.sha().equals(tip.sha())
                && stored.token() == tip.token()
                && Objects.equals(stored.holder(), tip.holder())
                && Objects.equals(stored.pusher(), tip.pusher())
                && stored.at() != null
                && stored.at().toEpochMilli() == tip.at().toEpochMilli();
    }

    /**
     * What landing one update writes, decided from its resource's state: the write, its event, and for the
     * pusher the line a bump's supersession prints. A landing found already written has no write and no
     * event: it only reports, as when it was written.
     */
    private record Step(Pending pending, ResourceWrite write, LedgerEvent event, long token, String line) {
        /** Once committed: the line for the pusher, and a bump's mark for the repository's record. */
        void report(List<String> lines, List<AcceptedMark> marks) {
            if (line != null) {
                lines.add(line);
            }
            if (pending.reason() == Reason.BUMPED && token > Tokens.NONE) {
                marks.add(new AcceptedMark(pending.resource(), token, null));
            }
        }
    }

    private static Step step(
            Pending p,
            ResourceState s,
            StoreIdentity identity,
            List<Pending> landedPast,
            Ancestry ancestry,
            Instant now) {
        RefUpdate u = p.update();
        boolean deleted = u.kind() == RefUpdate.Kind.DELETE;
        Tip tip = new Tip(u.newId(), p.token(), p.holder(), p.pusher(), p.decidedAt());
        if (sameLanding(s.tip(), tip)) {
            // Landed already: the store applied its commit, but the caller saw a failure (a reply lost, a
            // replica short) and kept it pending. Landed again, a bump would supersede a second time (a lease
            // granted since included) and the ledger would say it landed twice. A bump's mark is its own token,
            // which the counter still is only while no grant came since (a bump drops the lease, a grant sets
            // one): a later grant's number as a holderless mark would refuse that holder's pushes under it as
            // a token granted twice. Not known then: no mark, as when a crash lost it (protection lapses,
            // nothing is refused).
            return new Step(p, null, null, s.lease() == null ? s.latestGranted() : Tokens.NONE, null);
        }
        ResourceWrite w;
        long token = p.token();
        String line = null;
        switch (p.reason()) {
            case BUMPED -> {
                String kept = s.lastTokenWriteSha();
                boolean discards = !ObjectIds.isZero(kept) && (deleted || !ancestry.isAncestor(kept, u.newId()));
                w = Admission.bumpWrite(p.resource(), s, identity, tip, discards);
                token = w.latestGranted();
                line = Admission.supersededLine(s, u.ref(), now);
            }
            case ALLOWED -> w = Admission.allowWrite(p.resource(), u, s, identity, tip);
            default -> w = containsIt(landedPast, p, s, ancestry)
                    ? ResourceWrite.keeping(s, s.tip(), identity.generation())
                    : ResourceWrite.keeping(s, deleted ? null : u.newId(), tip, identity.generation());
        }
        return new Step(p, w, event(p, EventType.LANDED, token, p.reason(), null, now), token, line);
    }

    /**
     * Records updates that landed where their decisions took effect when they were made (fence serve,
     * which answers the curl shim and hooks in server mode, and the hooks on GitLab and GHES: no repository
     * whose refs a later hook looks at, so nothing was left pending): each gets the {@link EventType#LANDED}
     * event {@link #land} records, with its decision's reason, token and holder, read back from the
     * ledger. An update with no decision there was let through unrecorded, which only a store that could not
     * be asked does ({@code on-store-down = accept}): its landing says so ({@link Reason#STORE_DOWN}, token
     * 0), so that the ledger still shows the ref moved; except an update with the same old and new ids as
     * another of the push that has a decision (a symbolic ref pushed beside its target, which git updates
     * once and fence judged under the target's name): it gets nothing. The decisions of a push of many refs
     * are read in one query of the repository's newest admissions, and only those not among them by their
     * resources, one query each.
     *
     * @param push the landed push as the post-receive hook reads it (its pusher and repo id are the
     *     decision's)
     * @param landed the fenced updates git reports as done
     * @throws StoreUnavailableException when the store cannot be reached
     */
    public static void landedAsDecided(LeaseStore store, PushAttempt push, List<RefUpdate> landed, Instant now) {
        List<String> resources = new ArrayList<>(landed.size());
        for (RefUpdate u : landed) {
            resources.add(Resources.forRef(push.repoId(), u.ref()));
        }
        List<Pending> decided = new ArrayList<>(landed.size());
        // A push of many branches reads the repository's newest admissions once; an update whose decision is
        // not among them (other pushes to the repository came in between) is looked for by its resource.
        List<LedgerEvent> recent = landed.size() > 1
                ? store.query(new LedgerQuery(
                        null,
                        push.repoId(),
                        null,
                        null,
                        now.minus(DECISION_WINDOW),
                        EnumSet.of(EventType.ACCEPT, EventType.BUMP, EventType.ALLOW),
                        Math.min(2 * landed.size() + DECISIONS_READ, REPO_DECISIONS_READ)))
                : List.of();
        Map<String, List<LedgerEvent>> byResource = new HashMap<>();
        for (LedgerEvent d : recent) {
            // Not computeIfAbsent: a hook's post-receive runs this, and its path links no lambda.
            List<LedgerEvent> of = byResource.get(d.resource());
            if (of == null) {
                of = new ArrayList<>();
                byResource.put(d.resource(), of);
            }
            of.add(d);
        }
        for (int i = 0; i < landed.size(); i++) {
            Pending p = newestDecision(
                    byResource.getOrDefault(resources.get(i), List.of()), push, resources.get(i), landed.get(i));
            decided.add(p != null ? p : decisionOf(store, push, resources.get(i), landed.get(i), now));
        }
        List<LedgerEvent> events = new ArrayList<>();
        for (int i = 0; i < landed.size(); i++) {
            RefUpdate u = landed.get(i);
            Pending p = decided.get(i);
            if (p == null && judgedAsTwin(u, landed, decided)) {
                // A symbolic ref pushed beside its target with the same ids: git reports both lines and
                // updates the target once, which fence judged under the target's name (SymbolicRefs).
                continue;
            }
            events.add(
                    p != null
                            ? event(p, EventType.LANDED, p.token(), p.reason(), null, now)
                            : Admission.pushEvent(
                                    push,
                                    u,
                                    resources.get(i),
                                    null,
                                    EventType.LANDED,
                                    Tokens.NONE,
                                    Reason.STORE_DOWN,
                                    "no decision of fence on this update in the ledger: it was let through while the"
                                            + " store could not be asked",
                                    now));
        }
        if (!events.isEmpty()) {
            store.append(events);
        }
    }

    /** True when another of {@code landed}, with {@code u}'s old and new ids, has a decision in {@code decided}. */
    private static boolean judgedAsTwin(RefUpdate u, List<RefUpdate> landed, List<Pending> decided) {
        for (int j = 0; j < landed.size(); j++) {
            RefUpdate other = landed.get(j);
            if (other != u
                    && decided.get(j) != null
                    && other.oldId().equals(u.oldId())
                    && other.newId().equals(u.newId())) {
                return true;
            }
        }
        return false;
    }

    /**
     * How far back a landing looks for its decision. The decision comes just before git updates the ref;
     * the bound keeps an older push of the same update by the same pusher (the ref was reset since) from
     * standing in for one that was let through unrecorded.
     */
    static final Duration DECISION_WINDOW = Duration.ofHours(1);

    /** The newest admissions of a resource read to find a landing's decision; racing pushes are few. */
    static final int DECISIONS_READ = 64;

    /**
     * The most of a repository's newest admissions one landing reads at once (twice its updates, and {@link
     * #DECISIONS_READ} more): a push's own decisions are among the newest, and what the read misses is looked
     * for by resource.
     */
    static final int REPO_DECISIONS_READ = 20_000;

    /**
     * The admission in the ledger that {@code u} of {@code push} lands, as a pending landing whose token is
     * the one the decision recorded (for a bump, the token it raised the counter to); null when there is
     * none. Only an admission of the push's kind counts: under the push's token, an accept with that token;
     * without one, a bump or an allow. Of two such admissions of the same update by the same pusher (a
     * retry), the newest.
     */
    private static Pending decisionOf(LeaseStore store, PushAttempt push, String resource, RefUpdate u, Instant now) {
        List<LedgerEvent> decisions = store.query(new LedgerQuery(
                resource,
                null,
                null,
                null,
                now.minus(DECISION_WINDOW),
                EnumSet.of(EventType.ACCEPT, EventType.BUMP, EventType.ALLOW),
                DECISIONS_READ));
        return newestDecision(decisions, push, resource, u);
    }

    /**
     * The newest of {@code decisions} (oldest first, as queries return them) that is {@code u}'s decision, as
     * {@link #decisionOf} tells it, or null. Only an admission of {@code resource} counts: the ledger's ref
     * is the name as pushed, and the resource says whose it is.
     */
    private static Pending newestDecision(List<LedgerEvent> decisions, PushAttempt push, String resource, RefUpdate u) {
        java.util.OptionalLong token = push.options().token();
        for (int i = decisions.size() - 1; i >= 0; i--) {
            LedgerEvent d = decisions.get(i);
            Reason reason = Reason.fromCode(d.reason());
            // The landed push's own token tells its decision from another push of the same update by the same
            // pusher (a shared host account, a retry) that lost git's ref lock: an accept under that token,
            // or, for a tokenless push, a bump or an allow.
            boolean sameKind = token.isPresent()
                    ? reason == Reason.ACCEPTED && d.token() == token.getAsLong()
                    : reason == Reason.BUMPED || reason == Reason.ALLOWED;
            if (resource.equals(d.resource())
                    && u.ref().equals(d.ref())
                    && u.oldId().equals(d.oldSha())
                    && u.newId().equals(d.newSha())
                    && push.actor().pusher().equals(d.pusher())
                    && sameKind) {
                return new Pending(reason, resource, push.repoId(), u, d.token(), d.holder(), d.pusher(), d.at());
            }
        }
        return null;
    }

    /**
     * True when {@code p} landed past its tip and the resource's last token-written tip is a later one that
     * contains it. Identity, not equality: {@code landedPast} holds the very entries of the landing.
     */
    private static boolean containsIt(List<Pending> landedPast, Pending p, ResourceState s, Ancestry ancestry) {
        boolean past = false;
        for (Pending q : landedPast) {
            past |= q == p;
        }
        String kept = s.lastTokenWriteSha();
        String mine = p.update().newId();
        return past
                && !ObjectIds.isZero(kept)
                && !ObjectIds.isZero(mine)
                && !kept.equals(mine)
                && ancestry.isAncestor(mine, kept);
    }

    /**
     * Records admitted updates that did not land (a later hook refused them, or another push won the ref):
     * one {@link EventType#UNLANDED} event each; nothing else changes, so the lease a tokenless push would
     * have superseded stays, and the last write stays the one that landed.
     */
    public static void unlanded(LeaseStore store, List<Pending> dropped, Instant now) {
        if (dropped.isEmpty()) {
            return;
        }
        List<LedgerEvent> events = new ArrayList<>();
        for (Pending p : dropped) {
            events.add(event(
                    p,
                    EventType.UNLANDED,
                    p.token(),
                    p.reason(),
                    "admitted by fence, but the ref was not updated (a later hook refused it, or another push"
                            + " won the ref): it superseded nothing and is not the last write",
                    now));
        }
        store.append(events);
    }

    private static LedgerEvent event(Pending p, EventType type, long token, Reason reason, String detail, Instant now) {
        RefUpdate u = p.update();
        return new LedgerEvent(
                0,
                now,
                type,
                p.resource(),
                p.repoId(),
                u.ref(),
                p.holder(),
                p.pusher(),
                token,
                u.oldId(),
                u.newId(),
                reason.code(),
                detail);
    }
}
