package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.cli.Main;
import dev.fence.core.CommitResult;
import dev.fence.core.EventType;
import dev.fence.core.Grant;
import dev.fence.core.Identities;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.Resources;
import dev.fence.core.StoreIdentity;
import dev.fence.core.Tip;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.HookedRepo;
import dev.fence.testing.HookedRepo.Clone;
import dev.fence.testing.HookedRepo.Run;
import dev.fence.testing.ProcessTest;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pre-receive hook end to end: the real {@code git} binary pushes to a bare repository with fence's
 * hooks installed by the real installer, against a real store. Subclasses supply the store.
 */
@ProcessTest
abstract class PreReceiveEndToEndTest {
    static final String MAIN = "refs/heads/main";

    @TempDir
    Path tmp;

    HookedRepo repo;
    LeaseStore store;
    LeaseService leases;
    String repoId;

    /** The store URL for this test; the store must be empty or private to the test. */
    abstract String storeUrl();

    /** Makes the store unreachable (or unresponsive) for the hook. */
    abstract void breakStore() throws Exception;

    /** Undoes {@link #breakStore}. */
    abstract void repairStore() throws Exception;

    /**
     * Runs {@code during} while the store cannot be reached but keeps what it holds (a stall or a
     * partition, not a restart, which on Redis is a new generation that fences old tokens by itself).
     * By default {@link #breakStore} is such an outage.
     */
    void outage(Outage during) throws Exception {
        breakStore();
        try {
            during.run();
        } finally {
            repairStore();
        }
    }

    /** What a test does while the store is out. */
    @FunctionalInterface
    interface Outage {
        void run() throws Exception;
    }

    @BeforeEach
    void createRepo() {
        repoId = "app-" + System.nanoTime();
        repo = HookedRepo.create(tmp, repoId, storeUrl());
        store = Stores.open(storeUrl(), StoreOptions.defaults().withCallerClock());
        leases = new LeaseService(store, Clock.systemUTC());
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    String resource(String ref) {
        return Resources.forRef(repoId, ref);
    }

    Grant acquire(String holder) {
        return acquire(holder, MAIN);
    }

    Grant acquire(String holder, String ref) {
        var outcome = leases.acquire(resource(ref), holder, Duration.ofSeconds(60), null);
        return ((LeaseService.AcquireOutcome.Acquired) outcome).grant();
    }

    /**
     * Acquires as a successor would after the current lease lapsed: through a lease service whose clock
     * runs past every lease this test granted (leases are liveness; the hook's check does not read clocks).
     */
    Grant successor(String holder) {
        var later = new LeaseService(store, Clock.offset(Clock.systemUTC(), Duration.ofMinutes(laterMinutes += 2)));
        var outcome = later.acquire(resource(MAIN), holder, Duration.ofSeconds(60), null);
        return ((LeaseService.AcquireOutcome.Acquired) outcome).grant();
    }

    private long laterMinutes;

    static List<String> opts(Grant g) {
        return List.of("fence=" + g.token(), "fence-proof=" + g.proof());
    }

    /** A repository whose main branch has one commit, pushed without a lease by a person. */
    Clone seeded(String who) {
        Clone c = repo.clone(who);
        c.commit("seed");
        assertTrue(c.push(List.of(), "HEAD:" + MAIN).ok());
        return c;
    }

    List<LedgerEvent> ledger() {
        return store.query(new LedgerQuery(null, repoId, null, null, null, null, 0));
    }

    static String firstFenced(Run r) {
        return r.remoteLines().stream()
                .map(l -> l.startsWith("GL-HOOK-ERR: ") ? l.substring(13) : l)
                .filter(l -> l.startsWith("FENCED ") || l.startsWith("REJECTED "))
                .findFirst()
                .orElse(null);
    }

    static void assertFenced(Run r, String reason) {
        assertFalse(r.ok(), "the push must be refused:\n" + r.err());
        String line = firstFenced(r);
        assertNotNull(line, "a FENCED/REJECTED line is shown:\n" + r.err());
        assertTrue(line.endsWith("reason=" + reason), "expected reason " + reason + " in: " + line);
        assertFalse(r.err().contains("fp2."), "proofs never appear in hook output");
    }

    @Test
    void currentTokenPushesAndTheLedgerRecordsIt() throws Exception {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a");
        String tip = a.commit("work under the lease");
        Run r = a.push(opts(g), "HEAD:" + MAIN);
        assertTrue(r.ok(), r.err());
        assertEquals(tip, repo.tip(MAIN));
        var state = leases.status(resource(MAIN)).state();
        assertEquals(g.token(), state.highestAccepted());
        assertEquals(tip, state.tip().sha());
        List<EventType> types = ledger().stream().map(LedgerEvent::type).toList();
        assertTrue(
                types.containsAll(List.of(EventType.BUMP, EventType.GRANT, EventType.ACCEPT, EventType.LANDED)),
                types.toString());
    }

    @Test
    void staleTokenIsFencedBeforeAndAfterTheSuccessorPushes() {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant ga = acquire("agent-a");
        a.commit("A's work");
        Grant gb = successor("agent-b");
        Run before = a.push(opts(ga), "HEAD:" + MAIN);
        assertFenced(before, "superseded");
        assertTrue(firstFenced(before).contains("token=" + ga.token() + " current=" + gb.token()));
        assertTrue(before.err().contains("agent-b"), "the message names the current holder");
        assertTrue(before.err().contains("NOT a transient error"));

        Clone b = repo.clone("agent-b");
        b.commit("B's work");
        assertTrue(b.push(opts(gb), "HEAD:" + MAIN).ok());
        Run after = a.push(opts(ga), "+HEAD:" + MAIN); // git itself refuses the non-fast-forward without '+'
        assertFenced(after, "stale-token");
        assertTrue(after.err().contains(repo.tip(MAIN).substring(0, 12)), "the message names the current tip");
    }

    @Test
    void aTokenWithoutItsProofOrWithAnotherRefsProofIsFenced() {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a");
        Grant other = acquire("agent-a", "refs/heads/dev");
        a.commit("work");
        assertFenced(a.push(List.of("fence=" + g.token()), "HEAD:" + MAIN), "bad-proof");
        assertFenced(
                a.push(List.of("fence=" + g.token(), "fence-proof=" + other.proof()), "HEAD:" + MAIN), "bad-proof");
        assertTrue(a.push(opts(g), "HEAD:" + MAIN).ok(), "the right proof still works");
    }

    @Test
    void forcePushOverAnotherHoldersCommitIsFencedOverYourOwnAccepted() {
        Clone human = seeded("human");
        String base = human.head();
        Clone b = repo.clone("agent-b");
        Grant gb = acquire("agent-b");
        b.commit("B1");
        assertTrue(b.push(opts(gb), "HEAD:" + MAIN).ok());

        Clone a = repo.clone("agent-a");
        Grant ga = successor("agent-a");
        a.reset(base).commit("A rewrites B away");
        assertFenced(a.push(opts(ga), "+HEAD:" + MAIN), "foreign-overwrite");

        a.sync("main");
        String a1 = a.commit("A1");
        assertTrue(a.push(opts(ga), "HEAD:" + MAIN).ok());
        a.commit("A2");
        assertTrue(a.push(opts(ga), "HEAD:" + MAIN).ok());
        a.reset(a1).commit("A2 amended");
        Run own = a.push(opts(ga), "+HEAD:" + MAIN);
        assertTrue(own.ok(), "rewriting only your own commits is allowed:\n" + own.err());
        assertEquals(a.head(), repo.tip(MAIN));
    }

    @Test
    void aTokenlessPushBumpsAndMayNotDiscardTokenCommits() {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a");
        String a1 = a.commit("A1");
        assertTrue(a.push(opts(g), "HEAD:" + MAIN).ok());

        Clone human = repo.clone("human");
        human.sync("main").commit("a person's fix");
        Run bump = human.push(List.of(), "HEAD:" + MAIN);
        assertTrue(bump.ok(), bump.err());
        assertTrue(bump.err().contains("superseded agent-a's lease"), bump.err());

        a.sync("main").commit("A continues with the old token");
        assertFenced(a.push(opts(g), "HEAD:" + MAIN), "stale-token");

        human.reset(a1 + "~1").commit("rewrite without a token");
        assertFenced(human.push(List.of(), "+HEAD:" + MAIN), "tokenless-overwrite");
        assertFenced(human.push(List.of(), ":" + MAIN), "tokenless-overwrite");
    }

    @Test
    void rejectPolicyAndAgentPushersNeedATokenRefsOutsideThePatternsPass() throws Exception {
        Files.writeString(
                repo.bare().resolve("fence.conf"),
                "store = " + storeUrl() + "\n" + "agent-pushers = bot-*\n" + "pusher-policy.ci = reject\n",
                StandardCharsets.UTF_8);
        seeded("human");
        Clone bot = repo.clone("bot-7");
        bot.sync("main").commit("bot work");
        assertFenced(bot.push(List.of(), "HEAD:" + MAIN), "token-required");
        Clone ci = repo.clone("ci");
        ci.sync("main").commit("ci work");
        assertFenced(ci.push(List.of(), "HEAD:" + MAIN), "token-required");
        bot.git("tag", "v1").check();
        Run tag = bot.push(List.of(), "refs/tags/v1");
        assertTrue(tag.ok(), "tags are outside the fenced patterns:\n" + tag.err());
        assertTrue(ledger().stream().noneMatch(e -> "refs/tags/v1".equals(e.ref())), "untouched refs are not recorded");
    }

    @Test
    void aBrokenConfigurationNamesTheKeyAndFailsClosedForFencedRefs() throws Exception {
        Clone human = seeded("human");
        Files.writeString(
                repo.bare().resolve("fence.conf"),
                "store = " + storeUrl() + "\non-store-down = maybe\n",
                StandardCharsets.UTF_8);
        human.commit("a change while the configuration is broken");
        Run branch = human.push(List.of(), "HEAD:" + MAIN);
        assertFalse(branch.ok(), "fenced refs fail closed");
        assertTrue(branch.err().contains("on-store-down"), "the message names the key:\n" + branch.err());
        human.git("tag", "v-broken").check();
        assertTrue(human.push(List.of(), "refs/tags/v-broken").ok(), "refs outside the default patterns still pass");
    }

    @Test
    void malformedOptionsAreRefusedNamingTheProblemAndNothingIsAccepted() {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a");
        a.commit("work");
        String before = repo.tip(MAIN);
        long highest = leases.status(resource(MAIN)).state().highestAccepted();
        Map<List<String>, String> cases = new HashMap<>();
        cases.put(List.of("fence=abc"), "fence=abc");
        cases.put(List.of("fence=-1"), "fence=-1");
        cases.put(List.of("fence=99999999999999999999"), "fence=99999999999999999999");
        cases.put(List.of("fence=" + g.token(), "fence=" + g.token(), "fence-proof=" + g.proof()), "fence=");
        for (var c : cases.entrySet()) {
            Run r = a.push(c.getKey(), "HEAD:" + MAIN);
            assertFenced(r, "malformed");
            assertTrue(
                    r.err().contains(c.getValue()), "the message names the option " + c.getValue() + ":\n" + r.err());
        }
        assertEquals(before, repo.tip(MAIN));
        assertEquals(highest, leases.status(resource(MAIN)).state().highestAccepted(), "nothing was accepted");
        assertTrue(ledger().stream().filter(e -> e.type() == EventType.REJECT).allMatch(e -> "malformed"
                .equals(e.reason())));
    }

    @Test
    void malformedHookInputAndEmptyInput() {
        String zero = "0".repeat(40);
        Hook empty = hook("", Map.of());
        assertEquals(0, empty.exit);
        Hook bad = hook(zero + " " + "a".repeat(40) + " refs/heads/ma\u0007in\n", Map.of());
        assertEquals(1, bad.exit);
        assertTrue(bad.err.contains("control character"), bad.err);
        assertFalse(bad.err.contains("\u0007"), "control characters are never echoed raw");
        Hook garbage = hook("not a ref update\n", Map.of());
        assertEquals(1, garbage.exit);
        assertTrue(garbage.err.contains("line 1"), garbage.err);
        assertTrue(ledger().isEmpty(), "nothing recorded for unreadable input");
    }

    @Test
    void tenThousandRefsAreJudgedInOnePass() {
        Clone human = seeded("human");
        String head = human.head();
        StringBuilder stdin = new StringBuilder();
        String zero = "0".repeat(40);
        for (int i = 0; i < 10_000; i++) {
            stdin.append(zero)
                    .append(' ')
                    .append(head)
                    .append(" refs/tags/t")
                    .append(i)
                    .append('\n');
        }
        Grant g = acquire("agent-a");
        String next = human.commit("under a lease");
        human.git("push", "-q", "origin", "HEAD:refs/heads/scratch").check(); // object transfer for the check below
        stdin.append(head).append(' ').append(next).append(' ').append(MAIN).append('\n');
        long t0 = System.nanoTime();
        Hook r = hook(
                stdin.toString(),
                Map.of(
                        "GIT_PUSH_OPTION_COUNT",
                        "2",
                        "GIT_PUSH_OPTION_0",
                        "fence=" + g.token(),
                        "GIT_PUSH_OPTION_1",
                        "fence-proof=" + g.proof()));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, r.exit, r.err);
        assertTrue(ms < 5000, "judged in " + ms + " ms, inside GHES's 5 s");
        assertEquals(g.token(), leases.status(resource(MAIN)).state().highestAccepted());
    }

    @Test
    void storeDownFailsClosedForTokensWithinTwoSecondsAndTokenlessFollowsPolicy() throws Exception {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a");
        a.commit("work");
        Clone human = repo.clone("human");
        human.sync("main").commit("a person's fix");
        breakStore();
        try {
            long t0 = System.nanoTime();
            Hook fenced = hook(
                    line(repo.tip(MAIN), a.head()),
                    Map.of(
                            "GIT_PUSH_OPTION_COUNT",
                            "2",
                            "GIT_PUSH_OPTION_0",
                            "fence=" + g.token(),
                            "GIT_PUSH_OPTION_1",
                            "fence-proof=" + g.proof()));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(1, fenced.exit);
            assertTrue(fenced.err.contains("reason=store-down"), fenced.err);
            assertTrue(fenced.err.contains("fence store is unavailable"), fenced.err);
            // The store timeout of 2 s (a locked SQLite file or a Sentinel whose master is gone uses it up) and
            // the hook's own work, some 50 ms on an idle machine: 1 s of margin for a busy one, still well short
            // of a hook that waited the timeout twice.
            assertTrue(ms < 3000, "refused in " + ms + " ms");

            Run push = a.push(opts(g), "HEAD:" + MAIN);
            assertFenced(push, "store-down");
            Run tokenless = human.push(List.of(), "HEAD:" + MAIN);
            assertTrue(tokenless.ok(), "on-store-down = accept lets a tokenless push through:\n" + tokenless.err());
            assertTrue(tokenless.err().contains("warning: fence store unavailable"), tokenless.err());
        } finally {
            repairStore();
        }
    }

    /**
     * On a local-path remote the hook runs in the pusher's own environment. Each of these variables once
     * let a tokenless force-push discard a commit written under a token (over {@code git://} none did);
     * the rule now comes from the repository's {@code fence.conf} alone.
     */
    @Test
    void nothingInThePushersEnvironmentLetsATokenlessRewriteDiscardLeaseWork() throws Exception {
        repo.configure("pusher-policy.release-manager = bump-force");
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant g = acquire("agent-a");
        String a1 = a.commit("A1, under the lease");
        assertTrue(a.push(opts(g), "HEAD:" + MAIN).ok());

        Path yesGit = tmp.resolve("yes-git");
        Files.writeString(yesGit, "#!/bin/sh\n# answers every ancestry question with yes\nexit 0\n");
        yesGit.toFile().setExecutable(true);
        Path ownConf = Files.writeString(
                tmp.resolve("own.conf"),
                "store = sqlite:" + tmp.resolve("own.db") + "\npusher-policy.default = bump-force\n");
        Map<String, String> attempts = new java.util.LinkedHashMap<>();
        attempts.put("FENCE_FENCED_REFS", "refs/heads/elsewhere/**");
        attempts.put("FENCE_PUSHER_POLICY", "bump-force");
        attempts.put("FENCE_PUSHER", "release-manager");
        attempts.put("FENCE_GIT", yesGit.toString());
        attempts.put("FENCE_STORE", "sqlite:" + tmp.resolve("own.db"));
        attempts.put("FENCE_CONFIG", ownConf.toString());
        attempts.put("FENCE_REPO_ID", "elsewhere");
        attempts.put("FENCE_STORE_TIMEOUT", "1ms");

        Clone human = repo.clone("human");
        human.sync("main").reset(a1 + "~1").commit("rewrites A1 away, without a token");
        for (Map.Entry<String, String> e : attempts.entrySet()) {
            human.env(e.getKey(), e.getValue());
            Run r = human.push(List.of(), "+HEAD:" + MAIN);
            human.env(e.getKey(), null);
            assertFalse(r.ok(), e.getKey() + " in the pusher's environment let the rewrite through:\n" + r.err());
            assertFenced(r, "tokenless-overwrite");
            assertEquals(a1, repo.tip(MAIN), e.getKey());
        }
    }

    @Test
    void agentPushersComeFromTheFileNotThePushersEnvironment() {
        repo.configure("agent-pushers = bot-*");
        seeded("human");
        Clone bot = repo.clone("bot-1");
        bot.sync("main").commit("bot work without a token");
        bot.env("FENCE_AGENT_PUSHERS", "nobody-*");
        assertFenced(bot.push(List.of(), "HEAD:" + MAIN), "token-required");
    }

    @Test
    void onStoreDownComesFromTheFileNotThePushersEnvironment() throws Exception {
        repo.configure("on-store-down = reject");
        seeded("human");
        Clone human = repo.clone("human");
        human.sync("main").commit("a person's fix while the store is down");
        human.env("FENCE_ON_STORE_DOWN", "accept");
        breakStore();
        try {
            assertFenced(human.push(List.of(), "HEAD:" + MAIN), "store-down");
        } finally {
            repairStore();
        }
    }

    @Test
    void aHookWithoutAConfiguredStoreRefusesFencedRefsWhateverTheEnvironmentSays() throws Exception {
        Clone human = seeded("human");
        Files.writeString(repo.bare().resolve("fence.conf"), "fenced-refs = refs/heads/**\n");
        human.commit("pushed while the hook has no store");
        human.env("FENCE_STORE", "sqlite:" + tmp.resolve("own.db"));
        Run r = human.push(List.of(), "HEAD:" + MAIN);
        assertFalse(r.ok(), r.err());
        assertTrue(r.err().contains("no store configured"), r.err());
        assertFalse(Files.exists(tmp.resolve("own.db")), "the pusher's store is never opened");
    }

    /** Writes {@code content} as a commit object in {@code c}'s repository, as written, and returns its id. */
    String crafted(Clone c, String content) throws Exception {
        Path file =
                Files.writeString(tmp.resolve("crafted-" + System.nanoTime()), content, StandardCharsets.ISO_8859_1);
        return c.git("hash-object", "-t", "commit", "--literally", "-w", file.toString())
                .check()
                .out()
                .trim();
    }

    static final String SIGNED =
            "author m <m@example.invalid> 1700000000 +0000\n" + "committer m <m@example.invalid> 1700000000 +0000\n\n";

    /**
     * A commit with two {@code tree} headers and the old tip as {@code parent} is a root commit to git
     * (it reads parents only right after the first tree line): pushed as if it were a fast-forward, it
     * discards the old tip, and the hook judges it as git reads it, not as a lenient parser would.
     */
    @Test
    void aCraftedCommitGitReadsAsARootCommitIsJudgedAsTheRewriteItIs() throws Exception {
        seeded("human");
        Clone b = repo.clone("agent-b");
        Grant gb = acquire("agent-b");
        String b1 = b.commit("B1, under the lease");
        assertTrue(b.push(opts(gb), "HEAD:" + MAIN).ok());
        String tree = b.git("rev-parse", b1 + "^{tree}").check().out().trim();
        String twoTrees = "tree " + tree + "\ntree " + tree + "\nparent " + b1 + "\n" + SIGNED;

        Clone human = repo.clone("human").sync("main");
        String tokenless = crafted(human, twoTrees + "a tokenless rewrite\n");
        assertFenced(human.push(List.of(), "+" + tokenless + ":" + MAIN), "tokenless-overwrite");
        assertEquals(b1, repo.tip(MAIN));

        Clone a = repo.clone("agent-a").sync("main");
        Grant ga = successor("agent-a");
        String overwrite = crafted(a, twoTrees + "the successor overwrites B1\n");
        assertFenced(a.push(opts(ga), "+" + overwrite + ":" + MAIN), "foreign-overwrite");
        assertEquals(b1, repo.tip(MAIN));
        assertTrue(
                ledger().stream()
                        .noneMatch(e -> (e.type() == EventType.BUMP || e.type() == EventType.ACCEPT)
                                && (tokenless.equals(e.newSha()) || overwrite.equals(e.newSha()))),
                "neither is recorded as admitted: " + ledger());

        // Where git does read the old tip as the parent (git reads uppercase hex), it is a fast-forward.
        String upper = crafted(
                a,
                "tree " + tree + "\nparent " + b1.toUpperCase(java.util.Locale.ROOT) + "\n" + SIGNED
                        + "A continues from B1\n");
        Run ff = a.push(opts(ga), upper + ":" + MAIN);
        assertTrue(ff.ok(), "git's own fast-forward is one:\n" + ff.err());
        assertEquals(upper, repo.tip(MAIN));
    }

    /** Makes {@code name} a symbolic ref to {@code target} in the bare repository. */
    void symref(String name, String target) {
        HookedRepo.git(HookedRepo.gitEnv(tmp), repo.bare(), "symbolic-ref", name, target)
                .check();
    }

    static String seedOf(Clone c) {
        return c.git("rev-list", "--max-parents=0", "HEAD").check().out().trim();
    }

    static void assertSymbolicRefRefused(Run r, String ref, String target) {
        assertFenced(r, "symbolic-ref");
        assertTrue(r.remoteLines().contains("REJECTED ref=" + ref + " reason=symbolic-ref"), r.err());
        assertTrue(r.err().contains("Push to " + target + " itself instead"), r.err());
    }

    /**
     * Git updates a symbolic ref's target: a push to {@code alias} (a symbolic ref to main) once rewrote
     * main without a token, and let a lease on {@code alias} write main while another agent held main.
     */
    @Test
    void aPushToASymbolicRefIntoFencedRefsIsRefused() throws Exception {
        seeded("human");
        symref("refs/heads/alias", MAIN);
        Clone b = repo.clone("agent-b");
        Grant gb = acquire("agent-b");
        String b1 = b.commit("B1, under the lease on main");
        assertTrue(b.push(opts(gb), "HEAD:" + MAIN).ok());

        Clone human = repo.clone("human").sync("main");
        human.reset(b1 + "~1").commit("rewrites B1 away through the alias");
        assertSymbolicRefRefused(human.push(List.of(), "+HEAD:refs/heads/alias"), "refs/heads/alias", MAIN);
        assertEquals(b1, repo.tip(MAIN));

        Clone a = repo.clone("agent-a").sync("main");
        Grant onAlias = acquire("agent-a", "refs/heads/alias");
        a.commit("A1, under a lease on the alias");
        assertSymbolicRefRefused(a.push(opts(onAlias), "HEAD:refs/heads/alias"), "refs/heads/alias", MAIN);
        assertEquals(b1, repo.tip(MAIN), "main is agent-b's while agent-b holds it");
        assertTrue(
                ledger().stream().noneMatch(e -> "refs/heads/alias".equals(e.ref()) && e.type() != EventType.GRANT),
                "nothing is recorded for the alias: " + ledger());

        // Pushed under its own name, the same commit is judged as a push to main (agent-b holds it).
        assertFenced(a.push(opts(onAlias), "HEAD:" + MAIN), "bad-proof");
    }

    /**
     * A symbolic ref stored as a symbolic link (as {@code core.preferSymlinkRefs} writes them): git reads a
     * link whose text starts with {@code refs/} as a symbolic ref, and so does the hook.
     */
    @Test
    void aSymbolicRefStoredAsASymbolicLinkIsJudgedAsItsTarget() throws Exception {
        Clone human = seeded("human");
        String seed = human.head();
        Files.createSymbolicLink(repo.bare().resolve("refs/heads/alias"), Path.of(MAIN));
        Files.createSymbolicLink(repo.bare().resolve("refs/heads/elsewhere"), Path.of("../../HEAD"));
        human.commit("through a linked name");
        assertSymbolicRefRefused(human.push(List.of(), "+HEAD:refs/heads/alias"), "refs/heads/alias", MAIN);
        Run odd = human.push(List.of(), "+HEAD:refs/heads/elsewhere");
        assertFenced(odd, "symbolic-ref");
        assertEquals(seed, repo.tip(MAIN));
    }

    @Test
    void unfencedNamesDanglingTargetsAndChainsThatLeadIntoFencedRefsAreRefused() throws Exception {
        repo.configure("fenced-refs = refs/heads/main, refs/heads/release/**");
        Clone human = seeded("human");
        String seed = human.head();
        symref("refs/heads/team/alias", MAIN);
        symref("refs/tags/x", MAIN);
        symref("refs/tags/next", "refs/heads/release/next"); // does not exist yet: git would create it
        symref("refs/tags/c1", "refs/tags/c2");
        symref("refs/tags/c2", MAIN);
        symref("refs/tags/plain", "refs/tags/v1"); // leads nowhere fenced
        human.reset(seed).commit("a rewrite under another name");
        for (String name : List.of("refs/heads/team/alias", "refs/tags/x", "refs/tags/c1")) {
            assertSymbolicRefRefused(human.push(List.of(), "+HEAD:" + name), name, MAIN);
        }
        assertSymbolicRefRefused(
                human.push(List.of(), "HEAD:refs/tags/next"), "refs/tags/next", "refs/heads/release/next");
        assertNull(repo.tip("refs/heads/release/next"), "not created through the symbolic ref");
        assertTrue(human.push(List.of(), "HEAD:refs/tags/plain").ok(), "a symbolic ref outside the patterns passes");
        assertEquals(human.head(), repo.tip("refs/tags/v1"), "git updated its target");
        assertEquals(seed, repo.tip(MAIN));
    }

    @Test
    void aSymbolicRefPushedTogetherWithItsTargetIsJudgedAsTheTargetAsGitSkipsIt() throws Exception {
        Clone human = seeded("human");
        symref("refs/heads/alias", MAIN);
        human.commit("a fast-forward, pushed under both names");
        Run both = human.push(List.of(), "HEAD:" + MAIN, "HEAD:refs/heads/alias");
        assertTrue(both.ok(), "git applies main's update and skips the alias's:\n" + both.err());
        assertEquals(human.head(), repo.tip(MAIN));
        assertTrue(ledger().stream().noneMatch(e -> "refs/heads/alias".equals(e.ref())), ledger().toString());

        String landed = human.head();
        human.commit("two different updates");
        String next = human.head();
        Run inconsistent = human.push(List.of(), next + ":" + MAIN, "+" + seedOf(human) + ":refs/heads/alias");
        assertSymbolicRefRefused(inconsistent, "refs/heads/alias", MAIN); // git would refuse both lines too
        assertEquals(landed, repo.tip(MAIN));
    }

    @Test
    void withTheStoreDownATokenlessRewriteCannotDiscardLeaseWrittenCommits() throws Exception {
        Clone human = seeded("human");
        String seed = repo.tip(MAIN);
        Grant g = acquire("agent-a");
        Clone a = repo.clone("agent-a");
        a.sync("main").commit("written under a lease");
        assertTrue(a.push(opts(g), "HEAD:" + MAIN).ok());
        String leaseWritten = repo.tip(MAIN);
        human.reset(seed).commit("a rewrite that drops the lease's commit");
        breakStore();
        try {
            Run rewrite = human.push(List.of(), "+HEAD:" + MAIN);
            assertFalse(rewrite.ok(), "on-store-down = accept must not let a rewrite through:\n" + rewrite.err());
            assertTrue(rewrite.err().contains("reason=store-down"), rewrite.err());
            assertEquals(leaseWritten, repo.tip(MAIN), "the lease's commit is still there");
            Run delete = human.push(List.of(), ":" + MAIN);
            assertFalse(delete.ok(), "nor a delete:\n" + delete.err());
            human.sync("main").commit("on top");
            Run ff = human.push(List.of(), "HEAD:" + MAIN);
            assertTrue(ff.ok(), "a fast-forward follows on-store-down = accept:\n" + ff.err());
        } finally {
            repairStore();
        }
    }

    /**
     * Dates the resource's last admission {@code IN_FLIGHT} and a second back, through the store's own
     * commit, as though that long had passed since: the rules after the in-flight window, without the wait.
     */
    void ageLastAdmission(String ref) {
        String res = resource(ref);
        StoreIdentity id = store.identity(Identities.candidate(java.time.Instant.now()));
        ResourceState s = store.snapshot(List.of(res)).get(res);
        Tip t = s.tip();
        assertNotNull(t, "an admission was recorded");
        Tip aged = new Tip(t.sha(), t.token(), t.holder(), t.pusher(), t.at().minusSeconds(31));
        CommitResult r = store.commit(List.of(ResourceWrite.keeping(s, aged, id.generation())), List.of());
        assertTrue(r instanceof CommitResult.Committed, "aged: " + r);
    }

    @Test
    void aCommitThatLandedWhileTheStoreWasDownIsForeignToTheHoldersLaterRewrite() throws Exception {
        Clone human = seeded("human");
        Grant g = acquire("agent-a");
        Clone a = repo.clone("agent-a");
        String x = a.sync("main").commit("X, under the lease");
        assertTrue(a.push(opts(g), "HEAD:" + MAIN).ok());
        outage(() -> {
            human.sync("main").commit("H, while the store is down");
            Run ff = human.push(List.of(), "HEAD:" + MAIN);
            assertTrue(ff.ok(), "a fast-forward follows on-store-down = accept:\n" + ff.err());
        });
        String h = repo.tip(MAIN);
        ageLastAdmission(MAIN);
        a.reset(x).commit("the holder rewrites H away");
        assertFenced(a.push(opts(g), "+HEAD:" + MAIN), "foreign-overwrite");
        assertEquals(h, repo.tip(MAIN), "H is still there");
        a.sync("main").commit("the holder builds on H");
        Run on = a.push(opts(g), "HEAD:" + MAIN);
        assertTrue(on.ok(), "building on it is the holder's to do:\n" + on.err());
        String mine = repo.tip(MAIN);
        ageLastAdmission(MAIN);
        a.reset(x).commit("and then drops H with its own commit");
        assertFenced(a.push(opts(g), "+HEAD:" + MAIN), "foreign-overwrite");
        assertEquals(mine, repo.tip(MAIN));
    }

    @Test
    void aLandingThePostReceiveMissedCountsOnceTheRefHasMovedPastIt() throws Exception {
        Clone human = seeded("human");
        String seed = repo.tip(MAIN);
        Grant g = acquire("agent-a");
        Clone a = repo.clone("agent-a");
        String x = a.sync("main").commit("X, under the lease");
        Path postReceive = repo.bare().resolve("hooks").resolve("post-receive");
        Path aside = repo.bare().resolve("post-receive.aside");
        boolean hadPostReceive = Files.exists(postReceive);
        if (hadPostReceive) {
            // A post-receive that did not run (killed, timed out, the store down for it).
            Files.move(postReceive, aside);
        }
        try {
            assertTrue(a.push(opts(g), "HEAD:" + MAIN).ok());
        } finally {
            if (hadPostReceive) {
                Files.move(aside, postReceive);
            }
        }
        outage(() -> {
            human.sync("main").commit("H, while the store is down");
            Run ff = human.push(List.of(), "HEAD:" + MAIN);
            assertTrue(ff.ok(), ff.err());
        });
        String h = repo.tip(MAIN);
        human.reset(seed).commit("a tokenless rewrite that drops X");
        assertFenced(human.push(List.of(), "+HEAD:" + MAIN), "tokenless-overwrite");
        assertEquals(h, repo.tip(MAIN));
        assertTrue(
                ledger().stream().noneMatch(e -> e.type() == EventType.UNLANDED && x.equals(e.newSha())),
                "X landed, and is not recorded as unlanded: " + ledger());
    }

    /**
     * {@code GIT_NAMESPACE} (a host serving tenants of one repository): {@code refs/heads/main} of two
     * namespaces are two branches. A lease in one namespace writes nothing in the other, and each branch's
     * lease-written commits stay protected in its own namespace.
     */
    @Test
    void eachNamespaceOfARepositoryIsARepositoryOfItsOwn() {
        String ns1Main = "refs/namespaces/ns1/" + MAIN;
        String ns2Main = "refs/namespaces/ns2/" + MAIN;
        Clone human = repo.clone("human").env("GIT_NAMESPACE", "ns2");
        human.commit("the human's work in ns2");
        assertTrue(human.push(List.of(), "HEAD:" + MAIN).ok());
        String h = repo.tip(ns2Main);

        var outcome = leases.acquire(Resources.forRef(repoId + "//ns1", MAIN), "agent-a", Duration.ofSeconds(60), null);
        Grant ga = ((LeaseService.AcquireOutcome.Acquired) outcome).grant();
        Clone a = repo.clone("agent-a").env("GIT_NAMESPACE", "ns1");
        String a1 = a.commit("A's work in ns1, under its lease");
        Run created = a.push(opts(ga), "HEAD:" + MAIN);
        assertTrue(created.ok(), created.err());
        assertEquals(a1, repo.tip(ns1Main));

        Run delete = a.env("GIT_NAMESPACE", "ns2").push(opts(ga), ":" + MAIN);
        assertFalse(delete.ok(), "a lease on ns1's main deleted ns2's: " + delete.err());
        assertTrue(delete.err().contains("FENCED"), delete.err());
        assertEquals(h, repo.tip(ns2Main), "ns2's main is intact");

        Clone other = repo.clone("human-2").env("GIT_NAMESPACE", "ns1");
        other.commit("a tokenless history that drops A's commit");
        assertFenced(other.push(List.of(), "+HEAD:" + MAIN), "tokenless-overwrite");
        assertEquals(a1, repo.tip(ns1Main), "A's lease-written commit is intact");
    }

    @Test
    void gitLabVariablesGiveGitLabLinesAndIdentity() {
        seeded("human");
        repo.configure("agent-pushers = bot-*");
        Clone bot = repo.clone("ignored");
        bot.env("GL_ID", "user-7")
                .env("GL_USERNAME", "bot-gitlab")
                .env("GL_REPOSITORY", "project-" + repoId)
                .env("GL_PROTOCOL", "ssh")
                .env("GL_PROJECT_PATH", "group/app");
        bot.sync("main").commit("agent without a token");
        Run r = bot.push(List.of(), "HEAD:" + MAIN);
        assertFalse(r.ok());
        List<String> lines = r.remoteLines();
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("GL-HOOK-ERR: FENCED ")), r.err());
        assertTrue(
                lines.stream().filter(l -> !l.isBlank()).allMatch(l -> l.startsWith("GL-HOOK-ERR: ")),
                "every line carries the prefix:\n" + r.err());
        var events = store.query(new LedgerQuery(null, "project-" + repoId, null, null, null, null, 0));
        assertEquals(1, events.size());
        assertEquals("bot-gitlab", events.get(0).pusher());
        assertEquals("token-required", events.get(0).reason());
    }

    @Test
    void ghesVariablesGiveGhesIdentity() {
        seeded("human");
        Clone c = repo.clone("ignored");
        c.env("GITHUB_REPO_NAME", "acme/" + repoId).env("GITHUB_USER_LOGIN", "octo-person");
        c.sync("main").commit("a person's change on GHES");
        assertTrue(c.push(List.of(), "HEAD:" + MAIN).ok());
        var events = store.query(new LedgerQuery(null, "acme/" + repoId, null, null, null, null, 0));
        assertTrue(
                events.stream().anyMatch(e -> e.type() == EventType.BUMP && "octo-person".equals(e.pusher())),
                events.toString());
    }

    @Test
    void twoConcurrentPushesFromOneBaseLandOnceAndTheLedgerAgrees() throws Exception {
        seeded("human");
        Grant g = acquire("agent-a");
        Clone one = repo.clone("agent-a");
        Clone two = repo.clone("agent-a");
        one.commit("one");
        two.commit("two");
        CompletableFuture<Run> f1 = CompletableFuture.supplyAsync(() -> one.push(opts(g), "HEAD:" + MAIN));
        CompletableFuture<Run> f2 = CompletableFuture.supplyAsync(() -> two.push(opts(g), "HEAD:" + MAIN));
        Run r1 = f1.get();
        Run r2 = f2.get();
        assertTrue(r1.ok() ^ r2.ok(), "exactly one lands:\n" + r1.err() + "\n---\n" + r2.err());
        String tip = repo.tip(MAIN);
        String lost = (r1.ok() ? two : one).head();
        // The next push settles what the post-receive could not yet tell (the loser's git still ran then).
        Clone next = repo.clone("agent-a");
        next.sync("main").commit("after the race");
        assertTrue(next.push(opts(g), "HEAD:" + MAIN).ok());
        List<LedgerEvent> accepted = ledger().stream()
                .filter(e -> e.type() == EventType.ACCEPT && e.token() == g.token())
                .toList();
        assertTrue(accepted.stream().anyMatch(e -> e.newSha().equals(tip)), "the winner was admitted: " + ledger());
        List<LedgerEvent> landed = landed(g.token(), 2);
        assertEquals(2, landed.size(), "the winner and the next push landed: " + ledger());
        assertEquals(tip, landed.get(0).newSha(), "the ledger's first landing is the race winner's tip");
        assertTrue(landed.stream().noneMatch(e -> e.newSha().equals(lost)), "the loser never landed: " + ledger());
        List<LedgerEvent> unlanded =
                ledger().stream().filter(e -> e.type() == EventType.UNLANDED).toList();
        if (accepted.stream().anyMatch(e -> e.newSha().equals(lost))) {
            // Both passed pre-receive from one base: git's compare-and-swap let one land, and the ledger
            // marks the other's admission as not landed.
            assertEquals(1, unlanded.size(), ledger().toString());
            assertEquals(lost, unlanded.get(0).newSha());
        } else {
            assertEquals(List.of(), unlanded, "a refused push is not an unlanded admission");
        }
    }

    @Test
    void auditShowsEveryDecisionWithItsReason() {
        seeded("human");
        Clone a = repo.clone("agent-a");
        Grant ga = acquire("agent-a");
        a.commit("A1");
        assertTrue(a.push(opts(ga), "HEAD:" + MAIN).ok());
        Grant gb = successor("agent-b");
        a.commit("A2");
        assertFenced(a.push(opts(ga), "HEAD:" + MAIN), "superseded");
        assertFenced(a.push(List.of("fence=" + gb.token()), "HEAD:" + MAIN), "bad-proof");

        StringWriter out = new StringWriter();
        int code = Main.run(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(new StringWriter()),
                Map.of("FENCE_STORE", storeUrl(), "HOME", tmp.toString()),
                "audit",
                "--repo",
                repoId,
                "--json");
        assertEquals(0, code);
        String json = out.toString();
        for (String reason : List.of("\"bumped\"", "\"accepted\"", "\"superseded\"", "\"bad-proof\"")) {
            assertTrue(json.contains("\"reason\":" + reason), reason + " in\n" + json);
        }
        StringWriter table = new StringWriter();
        Main.run(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(table),
                new PrintWriter(new StringWriter()),
                Map.of("FENCE_STORE", storeUrl(), "HOME", tmp.toString()),
                "audit",
                "timeline",
                "--repo",
                repoId,
                "--ref",
                "main");
        String timeline = table.toString();
        assertTrue(timeline.contains("GRANT") && timeline.contains("REJECT") && timeline.contains("ACCEPT"), timeline);
        assertFalse(json.contains("fp2.") || timeline.contains("fp2."), "no proofs in the audit output");
        List<String> rejectedOnly = new ArrayList<>();
        StringWriter rej = new StringWriter();
        Main.run(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(rej),
                new PrintWriter(new StringWriter()),
                Map.of("FENCE_STORE", storeUrl(), "HOME", tmp.toString()),
                "audit",
                "--repo",
                repoId,
                "--rejected",
                "--json");
        rej.toString().lines().forEach(rejectedOnly::add);
        assertEquals(2, rejectedOnly.size(), rej.toString());
        assertEquals(
                Map.of("reject", 2L),
                rejectedOnly.stream()
                        .collect(Collectors.groupingBy(
                                l -> l.replaceAll(".*\"type\":\"([a-z]+)\".*", "$1"), Collectors.counting())));
        assertNull(null);
    }

    /** The LANDED events of {@code token}, waiting for {@code expected} of them (post-receive records in the background). */
    List<LedgerEvent> landed(long token, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        List<LedgerEvent> landed;
        do {
            landed = ledger().stream()
                    .filter(e -> e.type() == EventType.LANDED && e.token() == token)
                    .toList();
            if (landed.size() >= expected) {
                Thread.sleep(300); // and no more arrive
                return ledger().stream()
                        .filter(e -> e.type() == EventType.LANDED && e.token() == token)
                        .toList();
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        return landed;
    }

    record Hook(int exit, String err) {}

    static String line(String oldId, String newId) {
        return oldId + " " + newId + " " + MAIN + "\n";
    }

    /** Runs {@code fence hook pre-receive} in-process on this repository with {@code stdin} and extra env. */
    Hook hook(String stdin, Map<String, String> extra) {
        Map<String, String> env = new HashMap<>(HookedRepo.gitEnv(tmp));
        env.put("GIT_DIR", repo.bare().toString());
        env.put("REMOTE_USER", "agent-a");
        env.putAll(extra);
        StringWriter err = new StringWriter();
        int code = Main.run(
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintWriter(new StringWriter()),
                new PrintWriter(err),
                env,
                "hook",
                "pre-receive");
        awaitStoreThreads();
        return new Hook(code, err.toString());
    }

    /**
     * Waits for the store threads of in-process hook runs. A one-shot hook returns without waiting for a
     * store thread it handed nothing to (its process halts next); in this JVM that thread would go on opening
     * and closing the store, and writing its files, while the test's temporary directory is deleted.
     */
    private static void awaitStoreThreads() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("fence-admission")) {
                try {
                    t.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
