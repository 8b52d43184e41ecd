package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The admission rule (design §4) decided on snapshots, without a store. */
class AdmissionTest {
    private static final Instant NOW = Instant.parse("2026-11-29T14:40:07Z");
    private static final StoreIdentity ID = new StoreIdentity("gen1", 1000, new byte[32], NOW);
    private static final String REPO = "project-7";
    private static final String MAIN = "refs/heads/main";
    private static final String RES = Resources.forRef(REPO, MAIN);
    private static final String A = "a".repeat(40);
    private static final String B = "b".repeat(40);
    private static final String C = "c".repeat(40);
    private static final String D = "d".repeat(40);
    private static final String Z = ObjectIds.ZERO;

    /** Commit graph: A <- B <- C ; A <- D (D is a rewrite that drops B and C). */
    private static final Map<String, Set<String>> ANCESTORS =
            Map.of(A, Set.of(A), B, Set.of(A, B), C, Set.of(A, B, C), D, Set.of(A, D));

    private static final Ancestry HISTORY = (ancestor, descendant) ->
            ANCESTORS.getOrDefault(descendant, Set.of()).contains(ancestor);

    private static ResourceState state(
            long latest, long highest, String holder, long baseToken, String baseSha, String tokenTip) {
        Lease lease = holder == null
                ? null
                : new Lease(holder, latest, NOW.minusSeconds(60), NOW.plusSeconds(60), false, null);
        return new ResourceState(RES, 5, latest, highest, lease, baseToken, baseSha, tokenTip, null);
    }

    private static PushAttempt push(String pusher, Long token, String proof, RefUpdate... updates) {
        PushOptions opts =
                token == null ? PushOptions.none() : new PushOptions(OptionalLong.of(token), proof, List.of());
        return new PushAttempt(REPO, new Actor(pusher, HostKind.PLAIN, null), opts, List.of(updates));
    }

    private static PushAttempt withToken(long token, RefUpdate... updates) {
        return push("alice", token, Proofs.standard().issue(ID, RES, token, "alice"), updates);
    }

    private static Admission.Plan decide(PushAttempt p, ResourceState s) {
        return decide(p, s, FencePolicy.defaults());
    }

    private static Admission.Plan decide(PushAttempt p, ResourceState s, FencePolicy policy) {
        Map<String, ResourceState> states = new HashMap<>();
        states.put(RES, s);
        return Admission.decide(p, states, ID, policy, HISTORY, NOW);
    }

    private static Reason refusal(Admission.Plan plan) {
        assertFalse(plan.verdict().accepted(), "expected a refusal");
        assertTrue(plan.writes().isEmpty(), "a refused push writes nothing");
        return plan.verdict().refusals().get(0).fenced().reason();
    }

    /** A state whose ref is at the tip {@code tipSha} that token 1001 wrote, from base {@code base}. */
    private static ResourceState ownTip(String base, String tipSha) {
        Lease lease = new Lease("alice", 1001, NOW.minusSeconds(60), NOW.plusSeconds(60), false, null);
        return new ResourceState(
                RES,
                5,
                1001,
                1001,
                lease,
                1001,
                base,
                tipSha,
                new Tip(tipSha, 1001, "agent-a", "alice", NOW.minusSeconds(60)));
    }

    @Test
    void aFastForwardFromTheTipATokenWroteNeedsOnlyTheOldTipsAnswer() {
        // The base (A) was checked to be in B when 1001 wrote B; the ref is at B; C extends B. Only "is B in
        // C?" is known (a strict KnownAncestry throws for any other question).
        KnownAncestry known = new KnownAncestry().fact(B, C, true);
        Map<String, ResourceState> states = new HashMap<>(Map.of(RES, ownTip(A, B)));
        var plan = Admission.decide(
                withToken(1001, new RefUpdate(B, C, MAIN)), states, ID, FencePolicy.defaults(), known, NOW);
        assertTrue(plan.verdict().accepted());
        assertEquals(A, plan.writes().get(0).baseSha(), "the base stays the tip when 1001 first wrote");
    }

    @Test
    void aRewriteFromTheTipATokenWroteStillNeedsTheBaseInTheNewTip() {
        // The ref is at C (written under 1001 from base B); D drops B and C: no shortcut, the base decides.
        Map<String, ResourceState> states = new HashMap<>(Map.of(RES, ownTip(B, C)));
        var plan = Admission.decide(
                withToken(1001, new RefUpdate(C, D, MAIN)), states, ID, FencePolicy.defaults(), HISTORY, NOW);
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(plan));
        KnownAncestry asked = new KnownAncestry();
        assertTrue(
                org.junit.jupiter.api.Assertions.assertThrows(
                                KnownAncestry.Needed.class,
                                () -> Admission.decide(
                                        withToken(1001, new RefUpdate(C, D, MAIN)),
                                        states,
                                        ID,
                                        FencePolicy.defaults(),
                                        asked,
                                        NOW))
                        .questions()
                        .contains(new KnownAncestry.Question(B, D)),
                "without a known fast-forward the base is asked about");
    }

    @Test
    void currentTokenFastForwardIsAcceptedAndRaisesHighest() {
        var plan = decide(withToken(1001, new RefUpdate(A, B, MAIN)), state(1001, 0, "alice", 0, null, null));
        assertTrue(plan.verdict().accepted());
        ResourceWrite w = plan.writes().get(0);
        assertEquals(1001, w.highestAccepted());
        assertEquals(1001, w.baseToken());
        assertEquals(A, w.baseSha(), "the base is the tip when the token first wrote");
        assertEquals(B, w.tip().sha());
        assertEquals("alice", w.tip().holder(), "the holder the proof was issued to");
        assertEquals(5, w.expectedVersion());
        assertEquals(EventType.ACCEPT, plan.events().get(0).type());
    }

    @Test
    void supersededTokenIsFencedBeforeTheSuccessorWrites() {
        var plan = decide(withToken(1001, new RefUpdate(A, B, MAIN)), state(1002, 0, "agent-b", 0, null, null));
        assertEquals(Reason.SUPERSEDED, refusal(plan));
        var f = plan.verdict().refusals().get(0).fenced();
        assertEquals(1002, f.current());
        assertEquals("agent-b", f.currentHolder());
        assertEquals(EventType.REJECT, plan.events().get(0).type());
    }

    @Test
    void tokenBelowHighestAcceptedIsStale() {
        var plan = decide(withToken(1001, new RefUpdate(C, D, MAIN)), state(1002, 1002, "agent-b", 1002, A, C));
        assertEquals(Reason.STALE_TOKEN, refusal(plan));
    }

    @Test
    void tokenWithoutProofOrWithAnotherRefsProofIsFenced() {
        var noProof = push("alice", 1001L, null, new RefUpdate(A, B, MAIN));
        assertEquals(Reason.BAD_PROOF, refusal(decide(noProof, state(1001, 0, "a", 0, null, null))));
        String otherRefProof = Proofs.standard().issue(ID, Resources.forRef(REPO, "refs/heads/dev"), 1001, "alice");
        var wrong = push("alice", 1001L, otherRefProof, new RefUpdate(A, B, MAIN));
        assertEquals(Reason.BAD_PROOF, refusal(decide(wrong, state(1001, 0, "a", 0, null, null))));
    }

    @Test
    void proofFromAnOlderGenerationIsFenced() {
        StoreIdentity old = new StoreIdentity("gen0", 0, new byte[32], NOW);
        var p = push("alice", 1001L, Proofs.standard().issue(old, RES, 1001, "alice"), new RefUpdate(A, B, MAIN));
        assertEquals(Reason.OLD_GENERATION, refusal(decide(p, state(1001, 0, "a", 0, null, null))));
    }

    @Test
    void firstWriteUnderATokenMustFastForward() {
        var plan = decide(withToken(1002, new RefUpdate(C, D, MAIN)), state(1002, 1001, "alice", 1001, A, C));
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(plan));
    }

    @Test
    void rewritingOnlyYourOwnCommitsIsAccepted() {
        // token 1002 first wrote at A (base A) and pushed B, C; rewriting to D keeps A.
        var plan = decide(withToken(1002, new RefUpdate(C, D, MAIN)), state(1002, 1002, "alice", 1002, A, C));
        assertTrue(plan.verdict().accepted());
        assertEquals(A, plan.writes().get(0).baseSha(), "the base stays where the token first wrote");
    }

    @Test
    void rewritingBelowYourBaseIsFenced() {
        // token 1002 first wrote at B; D drops B, which another token wrote.
        var plan = decide(withToken(1002, new RefUpdate(C, D, MAIN)), state(1002, 1002, "alice", 1002, B, C));
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(plan));
    }

    @Test
    void deleteOnlyOfABranchCreatedUnderTheToken() {
        var created = decide(withToken(1002, new RefUpdate(C, Z, MAIN)), state(1002, 1002, "alice", 1002, Z, C));
        assertTrue(created.verdict().accepted());
        var foreign = decide(withToken(1002, new RefUpdate(C, Z, MAIN)), state(1002, 1002, "alice", 1002, A, C));
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(foreign));
    }

    @Test
    void commitsThatReachedTheRefOutsideTheRecordAreForeignToTheHoldersRewrite() {
        // 1001 wrote B from base A, admitted long enough ago to be settled; then C reached the ref with no
        // record (a fast-forward accepted while the store was down). D keeps A and B but drops C.
        Tip wroteB = new Tip(
                B, 1001, "agent-a", "alice", NOW.minus(Admission.IN_FLIGHT).minusSeconds(1));
        var s = new ResourceState(RES, 6, 1001, 1001, null, 1001, A, B, wroteB);
        Map<String, Set<String>> graph = new HashMap<>(ANCESTORS);
        String e = "e".repeat(40);
        graph.put(e, Set.of(A, B, e));
        String f = "f".repeat(40);
        graph.put(f, Set.of(A, B, C, f));
        Ancestry history = (ancestor, descendant) ->
                graph.getOrDefault(descendant, Set.of()).contains(ancestor);
        Map<String, ResourceState> states = new HashMap<>(Map.of(RES, s));
        var dropsC = Admission.decide(
                withToken(1001, new RefUpdate(C, e, MAIN)), states, ID, FencePolicy.defaults(), history, NOW);
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(dropsC));
        assertTrue(
                dropsC.verdict().refusals().get(0).fenced().detail().contains(ObjectIds.abbreviate(C)),
                "the message names the commit the rewrite would discard");
        // Rewriting from the tip it wrote, or from its base, is still its own business.
        assertTrue(Admission.decide(
                        withToken(1001, new RefUpdate(B, e, MAIN)), states, ID, FencePolicy.defaults(), history, NOW)
                .verdict()
                .accepted());
        assertTrue(Admission.decide(
                        withToken(1001, new RefUpdate(A, D, MAIN)), states, ID, FencePolicy.defaults(), history, NOW)
                .verdict()
                .accepted());
        // Building on C keeps it: accepted.
        assertTrue(Admission.decide(
                        withToken(1001, new RefUpdate(C, f, MAIN)), states, ID, FencePolicy.defaults(), history, NOW)
                .verdict()
                .accepted());
    }

    @Test
    void afterAnAdmissionThatDidNotLandTheHolderStillRewritesItsOwnCommits() {
        // 1001 wrote B from base A (landed), then C was admitted on B but never landed: the ref is at B.
        Tip admittedC = new Tip(
                C, 1001, "agent-a", "alice", NOW.minus(Admission.IN_FLIGHT).minusSeconds(1));
        var s = new ResourceState(RES, 6, 1001, 1001, null, 1001, A, C, admittedC);
        // D keeps A and drops B, 1001's own commit: as before the unlanded admission, that is the holder's.
        var plan = decide(withToken(1001, new RefUpdate(B, D, MAIN)), s);
        assertTrue(plan.verdict().accepted(), () -> plan.verdict().toString());
        assertEquals(A, plan.writes().get(0).baseSha(), "the base stays where 1001 first wrote");
    }

    @Test
    void aBranchRecreatedOutsideTheRecordIsNotTheHoldersToDelete() {
        // 1001 created the branch (base zero), wrote B and deleted it; C then created it again with no record.
        Tip deleted = new Tip(
                Z, 1001, "agent-a", "alice", NOW.minus(Admission.IN_FLIGHT).minusSeconds(1));
        var s = new ResourceState(RES, 7, 1001, 1001, null, 1001, Z, null, deleted);
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(decide(withToken(1001, new RefUpdate(C, Z, MAIN)), s)));
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(decide(withToken(1001, new RefUpdate(C, D, MAIN)), s)));
        // Its own creation it may still delete.
        Tip created = new Tip(
                C, 1001, "agent-a", "alice", NOW.minus(Admission.IN_FLIGHT).minusSeconds(1));
        var own = new ResourceState(RES, 7, 1001, 1001, null, 1001, Z, C, created);
        assertTrue(decide(withToken(1001, new RefUpdate(C, Z, MAIN)), own)
                .verdict()
                .accepted());
    }

    @Test
    void tokenlessFastForwardBumpsAndSupersedesTheLease() {
        var plan =
                decide(push("human", null, null, new RefUpdate(C, C, MAIN)), state(1002, 1002, "agent-b", 1002, A, C));
        assertTrue(plan.verdict().accepted(), "a no-op line is accepted");
        var ff = decide(push("human", null, null, new RefUpdate(B, C, MAIN)), state(1002, 1001, "agent-b", 1001, A, B));
        assertTrue(ff.verdict().accepted());
        ResourceWrite w = ff.writes().get(0);
        long bumped = ID.nextToken(1002, NOW.toEpochMilli());
        assertTrue(bumped > 1002);
        assertEquals(bumped, w.latestGranted(), "the counter is bumped past every outstanding token and its time");
        assertEquals(bumped, w.highestAccepted());
        assertTrue(w.clearLease());
        assertEquals(EventType.BUMP, ff.events().get(0).type());
        var admitted = (RefDecision.Admitted) ff.verdict().decisions().get(0);
        assertTrue(admitted.warning().contains("agent-b"), "the pusher is told whose lease it superseded");
    }

    @Test
    void bumpStartsAboveTheGenerationFloorAndItsTime() {
        var plan = decide(push("human", null, null, new RefUpdate(Z, A, MAIN)), ResourceState.empty(RES));
        assertEquals(
                StoreIdentity.floorAt(NOW.toEpochMilli()) + 1,
                plan.writes().get(0).latestGranted());
        // A floor ahead of the push's time (a generation made by a faster clock) still decides.
        var early = Admission.decide(
                push("human", null, null, new RefUpdate(Z, A, MAIN)),
                new HashMap<>(Map.of(RES, ResourceState.empty(RES))),
                new StoreIdentity("gen2", StoreIdentity.floorAt(NOW.toEpochMilli()) + 500, new byte[32], NOW),
                FencePolicy.defaults(),
                HISTORY,
                NOW);
        assertEquals(
                StoreIdentity.floorAt(NOW.toEpochMilli()) + 501,
                early.writes().get(0).latestGranted());
    }

    @Test
    void tokenlessRewriteOverTokenCommitsIsRefusedUnlessBumpForce() {
        var s = state(1002, 1002, "agent-b", 1002, A, C);
        assertEquals(
                Reason.TOKENLESS_OVERWRITE, refusal(decide(push("human", null, null, new RefUpdate(C, D, MAIN)), s)));
        assertEquals(
                Reason.TOKENLESS_OVERWRITE, refusal(decide(push("human", null, null, new RefUpdate(C, Z, MAIN)), s)));
        var force = new FencePolicy(
                List.of("refs/heads/**"),
                List.of(new FencePolicy.PusherRule("admin-*", PusherPolicy.BUMP_FORCE)),
                PusherPolicy.BUMP,
                List.of(),
                true,
                Duration.ofSeconds(2));
        var plan = decide(push("admin-jo", null, null, new RefUpdate(C, D, MAIN)), s, force);
        assertTrue(plan.verdict().accepted());
        assertEquals(null, plan.writes().get(0).lastTokenWriteSha(), "the token-written commits are gone");
    }

    @Test
    void agentPushersAndRejectPolicyNeedAToken() {
        var policy = new FencePolicy(
                List.of("refs/heads/**"),
                List.of(new FencePolicy.PusherRule("ci", PusherPolicy.REJECT)),
                PusherPolicy.BUMP,
                List.of("bot-*"),
                true,
                Duration.ofSeconds(2));
        var s = state(1001, 0, "a", 0, null, null);
        assertEquals(
                Reason.TOKEN_REQUIRED,
                refusal(decide(push("bot-7", null, null, new RefUpdate(A, B, MAIN)), s, policy)));
        assertEquals(
                Reason.TOKEN_REQUIRED, refusal(decide(push("ci", null, null, new RefUpdate(A, B, MAIN)), s, policy)));
    }

    @Test
    void allowPolicyRecordsWithoutBumping() {
        var policy = new FencePolicy(
                List.of("refs/heads/**"), List.of(), PusherPolicy.ALLOW, List.of(), true, Duration.ofSeconds(2));
        var plan =
                decide(push("ci", null, null, new RefUpdate(A, B, MAIN)), state(1001, 0, "a", 0, null, null), policy);
        assertTrue(plan.verdict().accepted());
        assertEquals(1001, plan.writes().get(0).latestGranted());
        assertFalse(plan.writes().get(0).clearLease());
        assertEquals(EventType.ALLOW, plan.events().get(0).type());
    }

    @Test
    void refsOutsideThePatternsAreUntouchedAndAPushIsAllOrNothing() {
        var p = push(
                "human-or-agent",
                1001L,
                "fp1.gen1." + "x".repeat(43),
                new RefUpdate(Z, A, "refs/tags/v1"),
                new RefUpdate(A, B, MAIN));
        var plan = decide(p, state(1001, 0, "a", 0, null, null));
        assertInstanceOf(RefDecision.Untouched.class, plan.verdict().decisions().get(0));
        assertEquals(Reason.OLD_GENERATION, refusal(plan), "a proof of the first format is void");
        assertEquals(1, plan.events().size(), "untouched refs are not recorded");
    }

    @Test
    void aTokenGrantedTwiceIsFencedForTheHolderItWasNotGrantedTo() {
        // A store that lost data granted 1001 again, to agent-b; alice's proof of 1001 is still a valid MAC.
        var plan = decide(withToken(1001, new RefUpdate(A, B, MAIN)), state(1001, 0, "agent-b", 0, null, null));
        assertEquals(Reason.DUPLICATE_TOKEN, refusal(plan));
        assertEquals("alice", plan.events().get(0).holder(), "the ledger names the holder the proof was issued to");
        String bProof = Proofs.standard().issue(ID, RES, 1001, "agent-b");
        assertNotEquals(bProof, Proofs.standard().issue(ID, RES, 1001, "alice"), "one token, two holders, two proofs");
    }

    @Test
    void theRepositorysOwnRecordFencesWhatAStoreThatRolledBackWouldAdmit() {
        var s = state(1001, 0, "alice", 0, null, null);
        Map<String, ResourceState> states = new HashMap<>(Map.of(RES, s));
        var push = withToken(1001, new RefUpdate(A, B, MAIN));
        // The host admitted 1001 for agent-b before the store lost it and granted 1001 to alice.
        var dup = Admission.decide(
                push,
                states,
                ID,
                FencePolicy.defaults(),
                HISTORY,
                NOW,
                Map.of(RES, new AcceptedMark(RES, 1001, "agent-b")),
                Proofs.standard());
        assertEquals(Reason.DUPLICATE_TOKEN, refusal(dup));
        // The host admitted 1003; the store's counter is at 1001: the store is behind, not trusted.
        var behind = Admission.decide(
                push,
                states,
                ID,
                FencePolicy.defaults(),
                HISTORY,
                NOW,
                Map.of(RES, new AcceptedMark(RES, 1003, "agent-b")),
                Proofs.standard());
        assertEquals(Reason.STORE_ROLLED_BACK, refusal(behind));
        assertTrue(FencedMessage.machineLine(behind.verdict().refusals().get(0).fenced())
                .startsWith("REJECTED "));
        var tokenless = Admission.decide(
                push("human", null, null, new RefUpdate(A, B, MAIN)),
                states,
                ID,
                FencePolicy.defaults(),
                HISTORY,
                NOW,
                Map.of(RES, new AcceptedMark(RES, 1003, null)),
                Proofs.standard());
        assertEquals(Reason.STORE_ROLLED_BACK, refusal(tokenless), "a bump from a store behind would repeat tokens");
        // The host bumped to 1001 on a tokenless push; a store that lost that grants 1001 to alice.
        var bumped = Admission.decide(
                push,
                states,
                ID,
                FencePolicy.defaults(),
                HISTORY,
                NOW,
                Map.of(RES, new AcceptedMark(RES, 1001, null)),
                Proofs.standard());
        assertEquals(Reason.DUPLICATE_TOKEN, refusal(bumped), "no grant ever carries a bump's number");
        // Its own mark, same holder: admitted as usual.
        var own = Admission.decide(
                push,
                states,
                ID,
                FencePolicy.defaults(),
                HISTORY,
                NOW,
                Map.of(RES, new AcceptedMark(RES, 1001, "alice")),
                Proofs.standard());
        assertTrue(own.verdict().accepted());
    }

    @Test
    void aReleasedTokenWritesNothing() {
        Lease released = new Lease("alice", 1001, NOW.minusSeconds(60), NOW.minusSeconds(1), true, null);
        var s = new ResourceState(RES, 5, 1001, 0, released, 0, null, null, null);
        assertEquals(Reason.RELEASED, refusal(decide(withToken(1001, new RefUpdate(A, B, MAIN)), s)));
    }

    @Test
    void whatAnAllowedPusherWroteIsForeignToTheToken() {
        // alice (1001) wrote B from base A; then an allowed pusher wrote C on top.
        var policy = new FencePolicy(
                List.of("refs/heads/**"),
                List.of(new FencePolicy.PusherRule("ci", PusherPolicy.ALLOW)),
                PusherPolicy.BUMP,
                List.of(),
                true,
                Duration.ofSeconds(2));
        var afterAlice = state(1001, 1001, "alice", 1001, A, B);
        var allowed = decide(push("ci", null, null, new RefUpdate(B, C, MAIN)), afterAlice, policy);
        assertTrue(allowed.verdict().accepted());
        ResourceWrite w = allowed.writes().get(0);
        assertEquals(C, w.baseSha(), "the base moves up to what the allowed pusher wrote");
        var afterCi = new ResourceState(
                RES, 6, 1001, 1001, afterAlice.lease(), w.baseToken(), w.baseSha(), w.lastTokenWriteSha(), w.tip());
        // alice's force-push back to D (drops B and C) would discard ci's C: foreign.
        assertEquals(Reason.FOREIGN_OVERWRITE, refusal(decide(withToken(1001, new RefUpdate(C, D, MAIN)), afterCi)));
    }

    @Test
    void holderPushersBindAProofToThePushersItsHolderRunsAs() {
        var policy = new FencePolicy(
                List.of("refs/heads/**"),
                List.of(),
                PusherPolicy.BUMP,
                List.of(),
                true,
                Duration.ofSeconds(2),
                List.of(new FencePolicy.HolderRule("ali*", "alice-bot")));
        var s = state(1001, 0, "alice", 0, null, null);
        assertEquals(
                Reason.PUSHER_NOT_HOLDER,
                refusal(decide(withToken(1001, new RefUpdate(A, B, MAIN)), s, policy)),
                "pusher 'alice' is not alice-bot");
        var asBot =
                push("alice-bot", 1001L, Proofs.standard().issue(ID, RES, 1001, "alice"), new RefUpdate(A, B, MAIN));
        var plan = decide(asBot, s, policy);
        assertTrue(plan.verdict().accepted());
        assertEquals("alice", plan.events().get(0).holder());
        assertEquals("alice-bot", plan.events().get(0).pusher(), "holder and pusher are recorded apart");
    }

    @Test
    void withTheStoreDownOnlyCreationsAndFastForwardsGetThrough() {
        var policy = FencePolicy.defaults();
        assertTrue(Admission.storeDown(push("human", null, null, new RefUpdate(A, B, MAIN)), policy, "down", HISTORY)
                .accepted());
        assertTrue(Admission.storeDown(push("human", null, null, new RefUpdate(Z, A, MAIN)), policy, "down", HISTORY)
                .accepted());
        var rewrite =
                Admission.storeDown(push("human", null, null, new RefUpdate(C, D, MAIN)), policy, "down", HISTORY);
        assertEquals(Reason.STORE_DOWN, rewrite.refusals().get(0).fenced().reason());
        var delete = Admission.storeDown(push("human", null, null, new RefUpdate(C, Z, MAIN)), policy, "down", HISTORY);
        assertFalse(delete.accepted());
    }

    @Test
    void storeDownFailsClosedForTokensAndFollowsPolicyForTokenless() {
        var policy = FencePolicy.defaults();
        var fenced =
                Admission.storeDown(withToken(1001, new RefUpdate(A, B, MAIN)), policy, "connection refused", HISTORY);
        assertEquals(Reason.STORE_DOWN, fenced.refusals().get(0).fenced().reason());
        var human = Admission.storeDown(
                push("human", null, null, new RefUpdate(A, B, MAIN)), policy, "connection refused", HISTORY);
        assertTrue(human.accepted());
        assertFalse(human.warnings().isEmpty(), "accepting without the store is said out loud");
        var closed = new FencePolicy(
                List.of("refs/heads/**"), List.of(), PusherPolicy.BUMP, List.of(), false, Duration.ofSeconds(2));
        assertFalse(Admission.storeDown(push("human", null, null, new RefUpdate(A, B, MAIN)), closed, "down", HISTORY)
                .accepted());
        var tags = Admission.storeDown(withToken(1001, new RefUpdate(Z, A, "refs/tags/v1")), policy, "down", HISTORY);
        assertTrue(tags.accepted(), "refs outside the patterns never need the store");
    }

    /**
     * Failing closed, nothing can be admitted, so every fenced ref gets the same refusal whoever pushes and
     * whatever the options: the curl shim, which cannot run this code, prints these machine lines from the
     * fenced patterns alone.
     */
    @Test
    void storeDownFailingClosedRefusesEveryFencedRefAlikeAndPassesTheRest() {
        var closed = new FencePolicy(
                        List.of("refs/heads/**"),
                        List.of(),
                        PusherPolicy.BUMP,
                        List.of("bot-*"),
                        true,
                        Duration.ofSeconds(2))
                .failingClosed();
        for (var push : List.of(
                push("human", null, null, new RefUpdate(A, B, MAIN)),
                push("human", null, null, new RefUpdate(Z, A, MAIN)),
                push("human", null, null, new RefUpdate(C, D, MAIN)),
                push("human", null, null, new RefUpdate(C, Z, MAIN)),
                push("bot-1", null, null, new RefUpdate(A, B, MAIN)),
                withToken(1001, new RefUpdate(A, B, MAIN)))) {
            var v = Admission.storeDown(push, closed, "down", HISTORY);
            assertFalse(v.accepted(), push.toString());
            assertEquals(1, v.refusals().size());
            assertEquals(
                    "REJECTED resource=" + RES + " ref=" + MAIN + " token=0 current=0 reason=store-down",
                    FencedMessage.machineLine(v.refusals().get(0).fenced()),
                    push.toString());
        }
        var tags = Admission.storeDown(
                push("bot-1", null, null, new RefUpdate(Z, A, "refs/tags/v1")), closed, "down", HISTORY);
        assertTrue(tags.accepted(), "refs outside the patterns never need the store");
    }

    @Test
    void fencedMessageNamesHolderTipAndNeverTheProof() {
        var plan = decide(
                withToken(1001, new RefUpdate(A, B, MAIN)),
                new ResourceState(
                        RES,
                        5,
                        1002,
                        0,
                        new Lease("agent-b", 1002, NOW, NOW.plusSeconds(30), false, null),
                        1002,
                        A,
                        C,
                        new Tip(C, 1002, "agent-b", "bob", NOW)));
        List<String> lines =
                FencedMessage.lines(plan.verdict().refusals().get(0).fenced());
        assertEquals(
                "FENCED resource=" + RES + " ref=" + MAIN + " token=1001 current=1002 reason=superseded", lines.get(0));
        String all = String.join("\n", lines);
        assertTrue(all.contains("agent-b"));
        assertTrue(all.contains(C.substring(0, 12)));
        assertTrue(all.contains("NOT a transient error"));
        assertTrue(all.contains("goal is already met"));
        assertFalse(all.contains("fp2."), "proofs are never printed");
    }

    @Test
    void aSecondPushUnderOneTokenFromAnotherBaseIsContendedWhileTheFirstIsInFlight() {
        Tip justAdmitted = new Tip(B, 1001, "agent-a", "alice", NOW.minusSeconds(1));
        var s = new ResourceState(RES, 6, 1001, 1001, null, 1001, A, B, justAdmitted);
        assertEquals(Reason.CONTENDED, refusal(decide(withToken(1001, new RefUpdate(A, D, MAIN)), s)));
        Tip longAgo = new Tip(
                B, 1001, "agent-a", "alice", NOW.minus(Admission.IN_FLIGHT).minusSeconds(1));
        var stale = new ResourceState(RES, 6, 1001, 1001, null, 1001, A, B, longAgo);
        assertTrue(
                decide(withToken(1001, new RefUpdate(A, D, MAIN)), stale)
                        .verdict()
                        .accepted(),
                "an admission that never landed does not block the holder for ever");
        assertTrue(
                decide(withToken(1001, new RefUpdate(B, C, MAIN)), s).verdict().accepted(), "building on it is fine");
    }
}
