package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.ObjectIds;
import dev.fence.json.Json;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lease's recorded SHA is the harness's, not the agent's: no option sets it, a push whose lease SHA
 * no longer matches the remote is refused, and a refused push leaves it where it was.
 */
@ProcessTest
class RecordedShaTest {
    @TempDir
    Path tmp;

    GitFixture git;
    FenceCli fence;
    String store;
    Path bare;
    Path agent;

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        store = "sqlite:" + tmp.resolve("fence.db");
        fence = new FenceCli(
                git.env(Map.of("FENCE_STORE", store)),
                new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS)));
        bare = git.bareWithMain("app");
        agent = git.clone(bare, "agent");
    }

    /**
     * fence as the agent that kept its grant: the token and proof of its current lease on main in the
     * environment ({@code FENCE_TOKEN}, {@code FENCE_PROOF}), as a harness passes them; plain fence when it
     * holds none. The test stands in for that harness, so it reads the proof through a port that has
     * authenticated the holder (direct mode issues none).
     */
    private FenceCli holding() {
        String resource = dev.fence.core.Resources.forRef("app", "refs/heads/main");
        try (dev.fence.core.LeaseService leases = dev.fence.core.LeaseService.forAuthenticatedHolders(
                dev.fence.store.Stores.open(store, dev.fence.store.StoreOptions.defaults()),
                java.time.Clock.systemUTC())) {
            dev.fence.core.Lease lease = leases.status(resource).state().lease();
            if (lease == null
                    || !(leases.proof(resource, "agent", lease.token())
                            instanceof dev.fence.core.LeaseOperations.ProofOutcome.Issued issued)) {
                return fence;
            }
            return fence.with("FENCE_TOKEN", Long.toString(lease.token())).with("FENCE_PROOF", issued.proof());
        }
    }

    private String recordedSha() throws Exception {
        FenceCli.Run r = fence.run(agent, "lease", "status", "--repo", "app", "--ref", "main", "--json");
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out()).get("lastLease").get("grantSha").asText();
    }

    @Test
    void aPushOverAMovedRemoteIsFencedAndTheRecordedShaStays() throws Exception {
        String seed = git.tip(bare, "refs/heads/main");
        FenceCli.Run acquired = fence.runAcquireAppMain(agent, "agent");
        assertEquals(0, acquired.exit(), acquired.all());
        assertTrue(acquired.out().contains("expected remote SHA: " + seed), acquired.all());

        // Someone pushes without fence (no hooks on this remote).
        Path human = git.clone(bare, "human");
        String theirs = git.commit(human, "x.txt", "theirs\n", "human change");
        git.git(human, "push", "-q", "origin", "main");

        String mine = git.commit(agent, "y.txt", "mine\n", "agent change");
        FenceCli.Run push = holding().run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
        assertEquals(3, push.exit(), push.all());
        JsonNode o = Json.read(push.out());
        assertEquals("fenced", o.get("status").asText());
        assertEquals(seed, o.get("oldSha").asText());
        assertEquals(mine, o.get("newSha").asText());
        assertTrue(o.get("message").get(0).asText().endsWith("reason=remote-changed"), o.toString());
        assertTrue(push.err().contains("at " + ObjectIds.abbreviate(theirs)), push.all());
        assertTrue(push.err().contains("recorded " + ObjectIds.abbreviate(seed)), push.all());
        // The lease is still the agent's: the message says the branch moved, not that the lease is lost.
        assertFalse(push.err().contains("no longer own"), push.all());
        assertTrue(push.err().contains("is still the current one, but the remote branch moved"), push.all());

        assertEquals(theirs, git.tip(bare, "refs/heads/main"), "nothing was overwritten");
        assertEquals(seed, recordedSha(), "a refused push does not move the recorded SHA");

        // A retry is refused the same way: the agent cannot make the lease agree with the remote.
        assertEquals(
                3,
                holding()
                        .run(agent, "push", "--repo", "app", "--holder", "agent")
                        .exit());
        assertEquals(seed, recordedSha());
    }

    /**
     * A hookless remote checks no proof, so fence push does: the holder's name and token are printed in
     * FENCED messages, and with them alone another agent could push over the holder's recorded SHA.
     */
    @Test
    void onAHooklessRemoteAPushNamingTheHoldersTokenWithoutItsProofPushesNothing() throws Exception {
        JsonNode b = fence.acquireAppMain(agent, "agent", "10m");
        String mine = git.commit(agent, "y.txt", "mine\n", "the holder's change");
        FenceCli.Run pushed = fence.holding(b).run(agent, "push", "--repo", "app", "--holder", "agent");
        assertEquals(0, pushed.exit(), pushed.all());
        assertEquals(mine, git.tip(bare, "refs/heads/main"));

        Path intruder = git.clone(bare, "intruder");
        git.git(intruder, "reset", "-q", "--hard", "HEAD~1");
        git.commit(intruder, "z.txt", "stale\n", "the stale agent's change");
        // A proof it holds of its own, for another resource, and one that is no proof at all.
        JsonNode own = Json.read(fence.run(
                        intruder,
                        "lease",
                        "acquire",
                        "--resource",
                        "git:app:refs/heads/other",
                        "--holder",
                        "intruder",
                        "--json")
                .out());
        String token = b.get("token").asText();
        for (String proof : List.of(own.get("proof").asText(), "not-a-proof")) {
            FenceCli.Run r = fence.with("FENCE_PROOF", proof)
                    .run(intruder, "push", "--repo", "app", "--holder", "agent", "--token", token, "--json");
            assertTrue(r.exit() == 2 || r.exit() == 3, proof + ": " + r.all());
            assertEquals(mine, git.tip(bare, "refs/heads/main"), "nothing was pushed with proof " + proof);
            assertEquals(mine, recordedSha(), "the holder's recorded SHA stays");
        }
    }

    @Test
    void noOptionLetsTheAgentChooseTheExpectedSha() throws Exception {
        String other = "b".repeat(40);
        fence.runAcquireAppMain(agent, "agent");
        String seed = recordedSha();
        for (List<String> extra : List.of(
                List.of("--force"),
                List.of("--force-with-lease=refs/heads/main:" + other),
                List.of("--expected-sha", other),
                List.of("--grant-sha", other),
                List.of("--old-sha", other))) {
            String[] args = java.util.stream.Stream.concat(
                            java.util.stream.Stream.of("push", "--repo", "app", "--holder", "agent"), extra.stream())
                    .toArray(String[]::new);
            FenceCli.Run r = holding().run(agent, args);
            assertEquals(2, r.exit(), extra + ": " + r.all());
        }
        FenceCli.Run acquire = fence.run(
                agent, "lease", "acquire", "--repo", "app", "--ref", "main", "--holder", "agent", "--grant-sha", other);
        assertEquals(2, acquire.exit(), acquire.all());
        assertEquals(seed, recordedSha());
    }

    @Test
    void anAbsentBranchIsRecordedAsTheZeroIdAndOnlyItsCreationIsAllowed() throws Exception {
        FenceCli.Run acquired = fence.run(
                agent,
                "lease",
                "acquire",
                "--repo",
                "app",
                "--ref",
                "feature",
                "--holder",
                "agent",
                "--git-remote",
                "origin",
                "--json");
        assertEquals(0, acquired.exit(), acquired.all());
        JsonNode grant = Json.read(acquired.out());
        assertEquals(ObjectIds.ZERO, grant.get("grantSha").asText());
        FenceCli holding = fence.with("FENCE_TOKEN", grant.get("token").asText())
                .with("FENCE_PROOF", grant.get("proof").asText());

        git.git(agent, "checkout", "-q", "-b", "feature");
        String mine = git.commit(agent, "f.txt", "feature\n", "feature work");
        // Someone else creates the branch first: the lease said it must not exist.
        Path human = git.clone(bare, "human");
        git.git(human, "push", "-q", "origin", "main:feature");
        FenceCli.Run refused = holding.run(agent, "push", "--repo", "app", "--holder", "agent");
        assertEquals(3, refused.exit(), refused.all());
        assertTrue(refused.err().contains("recorded no branch"), refused.all());

        git.git(human, "push", "-q", "origin", ":feature");
        FenceCli.Run pushed = holding.run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
        assertEquals(0, pushed.exit(), pushed.all());
        assertEquals(ObjectIds.ZERO, Json.read(pushed.out()).get("oldSha").asText());
        assertEquals(mine, git.tip(bare, "refs/heads/feature"));
        FenceCli.Run status = fence.run(agent, "lease", "status", "--repo", "app", "--ref", "feature", "--json");
        assertEquals(
                mine, Json.read(status.out()).get("lastLease").get("grantSha").asText(), "moved after the push");
    }

    @Test
    void aLeaseWithoutARecordedShaCannotPush() {
        assertEquals(
                0,
                fence.run(agent, "lease", "acquire", "--repo", "app", "--ref", "main", "--holder", "agent")
                        .exit());
        git.commit(agent, "y.txt", "mine\n", "agent change");
        FenceCli.Run push = holding().run(agent, "push", "--repo", "app", "--holder", "agent");
        assertEquals(6, push.exit(), push.all());
        assertTrue(push.err().contains("--git-remote"), push.all());
    }

    /** A bare clone of {@code bare} that takes push options, with {@code preReceive} as its hook when given. */
    private Path mirror(String name, String preReceive) throws Exception {
        Path m = tmp.resolve(name + ".git");
        git.git(tmp, "clone", "-q", "--bare", bare.toString(), m.toString());
        git.git(m, "config", "receive.advertisePushOptions", "true");
        if (preReceive != null) {
            Path hook = m.resolve("hooks/pre-receive");
            Files.writeString(hook, "#!/bin/sh\n" + preReceive + "\n");
            Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return m;
    }

    private void pushUrls(Path... urls) {
        git.gitAllowingFailure(agent, "config", "--unset-all", "remote.origin.pushurl");
        for (int i = 0; i < urls.length; i++) {
            git.git(agent, "config", "--add", "remote.origin.pushurl", urls[i].toString());
        }
    }

    @Test
    void aPushThatReachedADecoyButNotAMissingPushUrlDidNotLand() throws Exception {
        String seed = git.tip(bare, "refs/heads/main");
        fence.acquireAppMain(agent, "agent", "10m");
        Path decoy = mirror("decoy", null);
        pushUrls(decoy, tmp.resolve("nonexistent.git"));
        git.commit(agent, "y.txt", "mine\n", "agent change");

        FenceCli.Run push = holding().run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
        assertEquals(1, push.exit(), push.all());
        JsonNode o = Json.read(push.out());
        assertEquals("rejected", o.get("status").asText(), o.toString());
        assertEquals("TRANSPORT_ERROR", o.get("remoteStatus").asText(), o.toString());
        assertTrue(push.err().contains("nonexistent.git (push URL 2 of 2)"), push.all());
        assertTrue(push.err().contains("landed only at"), push.all());
        assertEquals(seed, recordedSha(), "a push that did not land everywhere does not move the recorded SHA");

        // The holder's next push, with the missing URL fixed, still runs against the recorded SHA.
        git.git(bare, "config", "receive.advertisePushOptions", "true");
        pushUrls(decoy, bare);
        FenceCli.Run again = holding().run(agent, "push", "--repo", "app", "--holder", "agent");
        assertEquals(0, again.exit(), again.all());
        assertEquals(git.head(agent), git.tip(bare, "refs/heads/main"));
        assertEquals(git.head(agent), recordedSha());
    }

    @Test
    void aPushUrlWhoseHookRejectsMeansNotLandedEvenWhereItLandedElsewhere() throws Exception {
        String seed = git.tip(bare, "refs/heads/main");
        fence.acquireAppMain(agent, "agent", "10m");
        Path accepting = mirror("accepting", null);
        Path rejecting = mirror("rejecting", "echo 'no, not here' >&2; exit 1");
        pushUrls(accepting, rejecting);
        String mine = git.commit(agent, "y.txt", "mine\n", "agent change");

        FenceCli.Run push = holding().run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
        assertEquals(1, push.exit(), push.all());
        JsonNode o = Json.read(push.out());
        assertEquals("REJECTED_OTHER_REASON", o.get("remoteStatus").asText(), o.toString());
        assertTrue(push.err().contains("rejected by " + rejecting), push.all());
        assertTrue(push.err().contains("no, not here"), push.all());
        assertEquals(mine, git.tip(accepting, "refs/heads/main"));
        assertEquals(seed, git.tip(rejecting, "refs/heads/main"));
        assertEquals(seed, recordedSha());

        // One push URL whose hook rejects: not landed either.
        pushUrls(rejecting);
        FenceCli.Run alone = holding().run(agent, "push", "--repo", "app", "--holder", "agent");
        assertEquals(1, alone.exit(), alone.all());
        assertEquals(seed, recordedSha());
    }

    @Test
    void oneOfSeveralPushUrlsWithoutPushOptionsDoesNotTurnThePushIntoATokenlessOne() throws Exception {
        String seed = git.tip(bare, "refs/heads/main");
        fence.acquireAppMain(agent, "agent", "10m");
        // Records every push option it is sent, and accepts.
        Path hooked = mirror("hooked", "env | grep '^GIT_PUSH_OPTION_[0-9]' >> \"$GIT_DIR/options.txt\"; exit 0");
        pushUrls(bare, hooked); // bare (no receive.advertisePushOptions) first: git stops there
        git.commit(agent, "y.txt", "mine\n", "agent change");

        FenceCli.Run push = holding().run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
        assertEquals(1, push.exit(), push.all());
        assertEquals(
                "TRANSPORT_ERROR", Json.read(push.out()).get("remoteStatus").asText());
        assertTrue(push.err().contains("takes no push options"), push.all());
        assertEquals(seed, git.tip(bare, "refs/heads/main"));
        assertEquals(seed, git.tip(hooked, "refs/heads/main"), "no push without the token reached the hooked URL");
        assertFalse(Files.exists(hooked.resolve("options.txt")), "the hooked URL was never pushed to");
        assertEquals(seed, recordedSha());
    }

    @Test
    void gitTracingInTheEnvironmentCarriesNoProof() throws Exception {
        Path hooked = mirror("traced", null);
        git.git(agent, "remote", "set-url", "origin", hooked.toString());
        git.git(agent, "fetch", "-q", "origin");
        JsonNode grant = fence.acquireAppMain(agent, "agent", "10m");
        String proof = grant.get("proof").asText();
        assertFalse(proof.isEmpty());
        String mine = git.commit(agent, "y.txt", "mine\n", "agent change");

        Path trace = tmp.resolve("packets.trace");
        Map<String, String> traced =
                new java.util.HashMap<>(git.env(Map.of("FENCE_STORE", "sqlite:" + tmp.resolve("fence.db"))));
        traced.put("GIT_TRACE_PACKET", trace.toString());
        traced.put("GIT_TRACE", "1");
        traced.put("GIT_TRACE2_EVENT", tmp.resolve("trace2.json").toString());
        traced.put("GIT_CURL_VERBOSE", "1");
        FenceCli tracing =
                new FenceCli(Map.copyOf(traced), new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS)));
        FenceCli.Run push = tracing.with("FENCE_TOKEN", grant.get("token").asText())
                .with("FENCE_PROOF", grant.get("proof").asText())
                .run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
        assertEquals(0, push.exit(), push.all());
        assertTrue(Json.read(push.out()).get("pushOptions").asBoolean(), push.all());
        assertEquals(mine, git.tip(hooked, "refs/heads/main"));
        assertFalse(push.all().contains(proof), push.all());
        for (Path f : List.of(trace, tmp.resolve("trace2.json"))) {
            assertFalse(Files.exists(f) && Files.readString(f).contains(proof), f + " holds the proof");
        }
    }

    @Test
    void relayedGitOutputNeverCarriesTheProof() {
        List<String> options = List.of("fence=7", "fence-proof=fp2.secret");
        String stderr = "packet:  push> fence-proof=fp2.secret\nremote: ok\nsaw fence-proof=fp2.other\n";
        assertEquals("remote: ok\nsaw fence-proof=<redacted>\n", GitPush.withoutSecrets(stderr, options));
        assertTrue(GitPush.traces("GIT_TRACE_PACKET")
                && GitPush.traces("GIT_TRACE2_EVENT")
                && GitPush.traces("GIT_TRACE")
                && GitPush.traces("GIT_CURL_VERBOSE"));
        assertFalse(GitPush.traces("GIT_SSH_COMMAND"));
    }
}
