package dev.fence.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each anomaly kind, in a synthetic history, is found; a clean history and overlapping operations are not. */
class HistoryCheckerTest {
    private static final String R = "git:faults:refs/heads/main";
    private static final String REF = "refs/heads/main";

    /** A linear commit graph: each commit's parent. */
    private final Map<String, String> parents = new HashMap<>();

    private final HistoryChecker.Commits commits = new HistoryChecker.Commits() {
        @Override
        public Set<String> reachable(String tip) {
            Set<String> out = new HashSet<>();
            for (String c = tip; c != null; c = parents.get(c)) {
                out.add(c);
            }
            return out;
        }

        @Override
        public Set<String> discarded(String from, String to) {
            Set<String> out = reachable(from);
            out.removeAll(reachable(to));
            return out;
        }
    };

    private History history = new History();

    private void commit(String id, String parent) {
        parents.put(id, parent);
    }

    /** A grant invoked at {@code t} and acknowledged at {@code t + 1}. */
    private void grant(String holder, long token, String generation, String proof, long t) {
        history.grant(new History.Grant(R, holder, token, generation, proof, t, t + 1));
    }

    private void push(String holder, long token, boolean accepted, boolean forced, String old, String commit, long t) {
        history.push(new History.Push(
                REF, holder, token, false, accepted, forced, old, commit, accepted ? null : "FENCED", t, t + 1));
    }

    private HistoryChecker.Findings check(String tip) {
        return HistoryChecker.check(history, Map.of(REF, tip), commits);
    }

    /** seed ← a1 ← b1, pushed by agent-a under 1 and agent-b under 2: a correct run. */
    private void cleanRun() {
        commit("seed", null);
        commit("a1", "seed");
        commit("b1", "a1");
        grant("agent-a", 1, "g1", "p1", 10);
        push("agent-a", 1, true, false, "seed", "a1", 20);
        grant("agent-b", 2, "g1", "p2", 30);
        push("agent-b", 2, true, false, "a1", "b1", 40);
    }

    @Test
    void aCleanHistoryHasNoAnomalies() {
        cleanRun();
        // agent-a's stale force-push under 1 is refused: not an anomaly.
        commit("a2", "a1");
        push("agent-a", 1, false, false, null, "a2", 50);
        HistoryChecker.Findings f = check("b1");
        assertEquals(0, f.total(), f.examples().toString());
        assertEquals(1, f.generations());
    }

    @Test
    void aTokenGrantedToTwoHoldersInOneGenerationIsARepeatedGrant() {
        cleanRun();
        grant("agent-c", 2, "g1", "p2", 50);
        HistoryChecker.Findings f = check("b1");
        assertEquals(1, f.repeatedGrants(), f.examples().toString());
        assertTrue(
                f.examples().get(0).contains("identical proofs"), f.examples().toString());
    }

    @Test
    void twoGrantsWithOneProofAreARepeatedGrantEvenForOneHolder() {
        cleanRun();
        grant("agent-b", 3, "g1", "p2", 50);
        assertEquals(1, check("b1").repeatedGrants());
    }

    @Test
    void aTokenBelowOneGrantedEarlierGoesBackwards() {
        cleanRun();
        grant("agent-c", 1, "g2", "p3", 50);
        HistoryChecker.Findings f = check("b1");
        assertEquals(1, f.tokensBackwards(), f.examples().toString());
        assertEquals(0, f.repeatedGrants(), "another generation: not a repeat within one");
        assertEquals(2, f.generations());
    }

    @Test
    void theSameTokenNumberInANewGenerationGoesBackwardsToo() {
        cleanRun();
        grant("agent-c", 2, "g2", "p3", 50);
        HistoryChecker.Findings f = check("b1");
        assertEquals(1, f.tokensBackwards(), f.examples().toString());
        assertEquals(0, f.repeatedGrants());
    }

    @Test
    void overlappingGrantsMayBeAcknowledgedInEitherOrder() {
        commit("seed", null);
        // Token 2 is acknowledged (at 15) before token 1 (at 16), but both were in flight together.
        history.grant(new History.Grant(R, "agent-a", 1, "g1", "p1", 10, 16));
        history.grant(new History.Grant(R, "agent-b", 2, "g1", "p2", 11, 15));
        assertEquals(0, check("seed").total());
    }

    @Test
    void aPushAcceptedBelowAnAcceptedTokenIsFound() {
        cleanRun();
        commit("c1", "b1");
        push("agent-c", 1, true, false, "b1", "c1", 50);
        HistoryChecker.Findings f = check("c1");
        assertEquals(1, f.acceptedBelowAccepted(), f.examples().toString());
        assertEquals(0, f.discardedCommits());
    }

    @Test
    void aRefusedPushBelowAnAcceptedTokenIsNoAnomaly() {
        cleanRun();
        commit("c1", "b1");
        push("agent-c", 1, false, false, null, "c1", 50);
        assertEquals(0, check("b1").total());
    }

    @Test
    void overlappingPushesMayBeAcknowledgedInEitherOrder() {
        commit("seed", null);
        commit("a1", "seed");
        commit("b1", "a1");
        history.push(new History.Push(REF, "agent-b", 2, false, true, false, "a1", "b1", null, 10, 15));
        history.push(new History.Push(REF, "agent-a", 1, false, true, false, "seed", "a1", null, 11, 16));
        assertEquals(0, check("b1").acceptedBelowAccepted());
    }

    @Test
    void aCommitDiscardedByAnotherHoldersForcePushIsFound() {
        cleanRun();
        // The incident: agent-a wakes with token 2 (repeated), builds on its own a1 and force-pushes over b1.
        commit("a2", "a1");
        history.push(new History.Push(REF, "agent-a", 2, true, true, true, "b1", "a2", null, 50, 51));
        HistoryChecker.Findings f = check("a2");
        assertEquals(1, f.discardedCommits(), f.examples().toString());
        assertTrue(
                f.examples().get(0).contains("discarded by agent-a's stale force-push"),
                f.examples().toString());
    }

    /** A woken grant's force-push by {@code holder} under {@code token}. */
    private void stalePush(String holder, long token, boolean accepted, String old, String commit, long t) {
        history.push(new History.Push(
                REF, holder, token, true, accepted, accepted, old, commit, accepted ? null : "FENCED", t, t + 1));
    }

    @Test
    void aRefusedStalePushOfTheSameHolderIsNoAnomaly() {
        cleanRun();
        grant("agent-b", 3, "g1", "p3", 50);
        commit("b3", "b1");
        push("agent-b", 3, true, false, "b1", "b3", 60);
        // agent-b's earlier session wakes with token 2 while the later one holds token 3.
        commit("b2", "b1");
        stalePush("agent-b", 2, false, null, "b2", 70);
        assertEquals(0, check("b3").total());
    }

    @Test
    void theSameHoldersEarlierSessionLandingAStalePushIsFoundThoughItDiscardsOnlyItsOwnHoldersCommit() {
        cleanRun();
        grant("agent-b", 3, "g1", "p3", 50);
        commit("b3", "b1");
        push("agent-b", 3, true, false, "b1", "b3", 60);
        // The earlier session of agent-b force-pushes over b3 under token 2 and proof p2, and lands.
        commit("b2", "b1");
        stalePush("agent-b", 2, true, "b3", "b2", 70);
        HistoryChecker.Findings f = check("b2");
        assertEquals(1, f.staleAccepted(), f.examples().toString());
        assertEquals(1, f.discardedCommits(), "a stale session's rewrite is not the holder's own");
        assertEquals(1, f.acceptedBelowAccepted());
        assertEquals(3, f.total());
        assertTrue(
                f.examples().stream()
                        .anyMatch(e -> e.startsWith("stale push accepted: " + REF + " accepted agent-b's")),
                f.examples().toString());
        assertTrue(
                f.examples().stream().anyMatch(e -> e.contains("discarded by agent-b's stale force-push")),
                f.examples().toString());
    }

    @Test
    void aStalePushUnderTheSameTokenNumberAcceptedIsFoundWhereNoOtherCheckSeesIt() {
        // A store that forgot agent-a's grant of 1 grants 1 again to agent-a, with a proof of its own; the
        // earlier session wakes and pushes a fast-forward under the first grant's token: not below any
        // accepted token, no commit discarded, and the repeated number went to one holder.
        commit("seed", null);
        commit("a1", "seed");
        commit("a2", "a1");
        grant("agent-a", 1, "g1", "p1", 10);
        grant("agent-a", 1, "g1", "p1b", 20);
        push("agent-a", 1, true, false, "seed", "a1", 30);
        history.push(new History.Push(REF, "agent-a", 1, true, true, false, "a1", "a2", null, 40, 41));
        HistoryChecker.Findings f = check("a2");
        assertEquals(0, f.repeatedGrants() + f.tokensBackwards() + f.acceptedBelowAccepted() + f.discardedCommits());
        assertEquals(1, f.staleAccepted(), f.examples().toString());
        assertEquals(1, f.total());
    }

    @Test
    void aHolderRewritingItsOwnCommitIsNoAnomaly() {
        cleanRun();
        commit("b2", "a1");
        push("agent-b", 2, true, true, "b1", "b2", 50);
        assertEquals(0, check("b2").total());
    }

    @Test
    void aLandedCommitMissingWithoutAnyRecordedRewriteIsFound() {
        cleanRun();
        // The ref went back to a1 by a push the history does not know.
        HistoryChecker.Findings f = check("a1");
        assertEquals(1, f.discardedCommits(), f.examples().toString());
        assertTrue(
                f.examples().get(0).contains("no recorded push removed it"),
                f.examples().toString());
    }

    @Test
    void examplesAreCappedPerCheck() {
        cleanRun();
        for (int i = 0; i < 10; i++) {
            grant("agent-x" + i, 2, "g1", "q" + i, 100 + 10 * i);
        }
        HistoryChecker.Findings f = check("b1");
        assertEquals(10, f.repeatedGrants());
        assertEquals(
                HistoryChecker.EXAMPLES,
                f.examples().stream().filter(e -> e.startsWith("repeated")).count());
    }
}
