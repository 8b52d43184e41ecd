package dev.fence.faults;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a fault run's {@link History} and the repository it pushed to for the five safety properties:
 *
 * <ol>
 *   <li><b>repeated grants</b>: no token number granted to two different holders on one resource within
 *       one generation, and no two grants with identical proofs;
 *   <li><b>tokens backwards</b>: per resource, a grant invoked after another was acknowledged carries a
 *       larger token (an equal one only in the same generation, which the first check judges);
 *   <li><b>accepted below accepted</b>: per ref, no push is accepted with a token below one already
 *       accepted (acknowledged before it was invoked);
 *   <li><b>discarded commits</b>: every commit an accepted push landed is in the ref's final history,
 *       unless a push by the same holder under a live grant rewrote it away (a stale grant of the same
 *       holder is an earlier session, not the holder's own rewrite);
 *   <li><b>stale pushes accepted</b>: no {@linkplain History.Push#stale() stale} push is accepted, whatever
 *       its token: each was made under a grant that the pusher's live grant superseded, the same holder's
 *       earlier grants and grants of a repeated token number included, which the third check cannot see
 *       (their token is not below the accepted one, or no push under the superseding grant came first).
 * </ol>
 *
 * Only real-time order counts ("acknowledged before invoked"): operations that overlapped may have been
 * applied in either order, so none of the checks can fire on a correct store however the threads were
 * scheduled.
 *
 * <p>Stateless; {@link #check} asks {@link Commits} for the repository's graph.
 */
public final class HistoryChecker {
    /** Examples kept per check, for the report. */
    static final int EXAMPLES = 3;

    private HistoryChecker() {}

    /** The repository's commit graph, as the checker needs it. */
    public interface Commits {
        /** Every commit reachable from {@code tip} (full ids), {@code tip} included. */
        Set<String> reachable(String tip);

        /** The commits reachable from {@code from} but not from {@code to}: what an update from → to discarded. */
        Set<String> discarded(String from, String to);
    }

    /**
     * What the checks found.
     *
     * @param repeatedGrants grants that repeat an earlier grant's token to another holder in one generation,
     *     or its proof
     * @param tokensBackwards grants whose token is not above one acknowledged before them on the resource
     * @param acceptedBelowAccepted accepted pushes whose token is below one accepted before them on the ref
     * @param discardedCommits commits landed by an accepted push and missing from the final history because
     *     of another holder's push, a stale push (of any holder), or nothing recorded
     * @param staleAccepted stale pushes accepted
     * @param generations distinct generations the grants reported
     * @param examples a few of each, described
     */
    public record Findings(
            int repeatedGrants,
            int tokensBackwards,
            int acceptedBelowAccepted,
            int discardedCommits,
            int staleAccepted,
            int generations,
            List<String> examples) {
        public Findings {
            examples = List.copyOf(examples);
        }

        /** All anomalies. */
        public int total() {
            return repeatedGrants + tokensBackwards + acceptedBelowAccepted + discardedCommits + staleAccepted;
        }
    }

    /**
     * Runs every check.
     *
     * @param finalTips each pushed ref's value at the end (null for a ref that no longer exists)
     */
    public static Findings check(History history, Map<String, String> finalTips, Commits commits) {
        List<String> examples = new ArrayList<>();
        List<History.Grant> grants = history.grants();
        List<History.Push> pushes = history.pushes();
        int repeated = repeatedGrants(grants, examples);
        int backwards = tokensBackwards(grants, examples);
        int below = acceptedBelowAccepted(pushes, examples);
        int discarded = discardedCommits(pushes, finalTips, commits, examples);
        int stale = staleAccepted(pushes, examples);
        Set<String> generations = new LinkedHashSet<>();
        grants.forEach(g -> generations.add(g.generation()));
        return new Findings(repeated, backwards, below, discarded, stale, generations.size(), examples);
    }

    static int repeatedGrants(List<History.Grant> grants, List<String> examples) {
        Map<String, History.Grant> byToken = new HashMap<>();
        Map<String, History.Grant> byProof = new HashMap<>();
        int n = 0;
        int shown = 0;
        for (History.Grant g : inAckOrder(grants)) {
            String key = g.resource() + "\n" + g.generation() + "\n" + g.token();
            History.Grant sameToken = byToken.putIfAbsent(key, g);
            History.Grant sameProof = byProof.putIfAbsent(g.proofHash(), g);
            String what = null;
            if (sameToken != null && !sameToken.holder().equals(g.holder())) {
                what = "token " + g.token() + " on " + g.resource() + " granted to " + sameToken.holder()
                        + " and then to "
                        + g.holder() + " in generation " + g.generation()
                        + (sameToken.proofHash().equals(g.proofHash()) ? ", with identical proofs" : "");
            } else if (sameProof != null) {
                what = "grants of token " + sameProof.token() + " to " + sameProof.holder() + " and of token "
                        + g.token() + " to " + g.holder() + " on " + g.resource() + " carry identical proofs";
            }
            if (what != null) {
                n++;
                if (shown++ < EXAMPLES) {
                    examples.add("repeated grant: " + what);
                }
            }
        }
        return n;
    }

    static int tokensBackwards(List<History.Grant> grants, List<String> examples) {
        int n = 0;
        int shown = 0;
        for (List<History.Grant> one : byKey(grants, History.Grant::resource).values()) {
            List<History.Grant> acked = new ArrayList<>(one);
            acked.sort(Comparator.comparingLong(History.Grant::ackedNanos));
            List<History.Grant> invoked = new ArrayList<>(one);
            invoked.sort(Comparator.comparingLong(History.Grant::invokedNanos));
            int i = 0;
            History.Grant max = null;
            for (History.Grant g : invoked) {
                while (i < acked.size() && acked.get(i).ackedNanos() < g.invokedNanos()) {
                    History.Grant a = acked.get(i++);
                    if (max == null || a.token() > max.token()) {
                        max = a;
                    }
                }
                if (max == null) {
                    continue;
                }
                boolean back = g.token() < max.token()
                        || (g.token() == max.token() && !g.generation().equals(max.generation()));
                if (back) {
                    n++;
                    if (shown++ < EXAMPLES) {
                        examples.add("token backwards: " + g.holder() + " was granted " + g.token() + " on "
                                + g.resource() + " (generation " + g.generation() + ") after " + max.holder()
                                + " had been granted " + max.token() + " (generation " + max.generation() + ")");
                    }
                }
            }
        }
        return n;
    }

    static int acceptedBelowAccepted(List<History.Push> pushes, List<String> examples) {
        List<History.Push> accepted = new ArrayList<>();
        for (History.Push p : pushes) {
            if (p.accepted()) {
                accepted.add(p);
            }
        }
        int n = 0;
        int shown = 0;
        for (List<History.Push> one : byKey(accepted, History.Push::ref).values()) {
            List<History.Push> acked = new ArrayList<>(one);
            acked.sort(Comparator.comparingLong(History.Push::ackedNanos));
            List<History.Push> invoked = new ArrayList<>(one);
            invoked.sort(Comparator.comparingLong(History.Push::invokedNanos));
            int i = 0;
            History.Push max = null;
            for (History.Push p : invoked) {
                while (i < acked.size() && acked.get(i).ackedNanos() < p.invokedNanos()) {
                    History.Push a = acked.get(i++);
                    if (max == null || a.token() > max.token()) {
                        max = a;
                    }
                }
                if (max != null && p.token() < max.token()) {
                    n++;
                    if (shown++ < EXAMPLES) {
                        examples.add("accepted below accepted: " + p.ref() + " accepted " + p.holder() + "'s push under"
                                + " token " + p.token() + " after " + max.holder() + "'s under token " + max.token());
                    }
                }
            }
        }
        return n;
    }

    static int discardedCommits(
            List<History.Push> pushes, Map<String, String> finalTips, Commits commits, List<String> examples) {
        Map<String, List<History.Push>> byRef = byKey(pushes, History.Push::ref);
        Map<History.Push, Set<String>> discardedBy = new HashMap<>();
        int n = 0;
        int shown = 0;
        for (Map.Entry<String, List<History.Push>> e : byRef.entrySet()) {
            String tip = finalTips.get(e.getKey());
            Set<String> kept = tip == null ? Set.of() : commits.reachable(tip);
            for (History.Push p : e.getValue()) {
                if (!p.accepted() || kept.contains(p.newId())) {
                    continue;
                }
                List<History.Push> removers = new ArrayList<>();
                for (History.Push q : e.getValue()) {
                    if (q == p || !q.accepted() || !q.forced() || q.oldId() == null) {
                        continue;
                    }
                    Set<String> gone = discardedBy.computeIfAbsent(q, x -> commits.discarded(x.oldId(), x.newId()));
                    if (gone.contains(p.newId())) {
                        removers.add(q);
                    }
                }
                History.Push foreign = null;
                for (History.Push q : removers) {
                    if (q.stale() || !q.holder().equals(p.holder())) {
                        foreign = q;
                        break;
                    }
                }
                if (foreign == null && !removers.isEmpty()) {
                    continue; // the holder rewrote its own commit under a live grant
                }
                n++;
                if (shown++ < EXAMPLES) {
                    String c = abbreviate(p.newId());
                    examples.add(
                            foreign == null
                                    ? "discarded commit: " + c + ", landed on " + p.ref() + " by " + p.holder()
                                            + " under token " + p.token()
                                            + ", is not in the final history and no recorded push removed it"
                                    : "discarded commit: " + c + ", landed on " + p.ref() + " by " + p.holder()
                                            + " under token "
                                            + p.token() + ", was discarded by " + foreign.holder() + "'s"
                                            + (foreign.stale() ? " stale" : "") + " force-push under token "
                                            + foreign.token());
                }
            }
        }
        return n;
    }

    static int staleAccepted(List<History.Push> pushes, List<String> examples) {
        int n = 0;
        for (History.Push p : pushes) {
            if (p.stale() && p.accepted()) {
                if (n++ < EXAMPLES) {
                    examples.add("stale push accepted: " + p.ref() + " accepted " + p.holder() + "'s stale force-push"
                            + " under token " + p.token() + " (" + abbreviate(p.newId()) + ")");
                }
            }
        }
        return n;
    }

    private static List<History.Grant> inAckOrder(List<History.Grant> grants) {
        List<History.Grant> sorted = new ArrayList<>(grants);
        sorted.sort(Comparator.comparingLong(History.Grant::ackedNanos));
        return sorted;
    }

    private static <T> Map<String, List<T>> byKey(List<T> items, java.util.function.Function<T, String> key) {
        Map<String, List<T>> out = new LinkedHashMap<>();
        for (T t : items) {
            out.computeIfAbsent(key.apply(t), k -> new ArrayList<>()).add(t);
        }
        return out;
    }

    private static String abbreviate(String id) {
        return id.length() > 10 ? id.substring(0, 10) : id;
    }
}
