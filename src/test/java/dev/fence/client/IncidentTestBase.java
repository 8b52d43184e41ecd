package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.EventType;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ObjectIds;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The incident the product exists for, end to end with the real git and a real store: agent A takes
 * a branch's lease, works, pauses past its TTL; agent B takes the lease and pushes; A wakes up and
 * pushes. A must be FENCED (exit 3) and find fresh state when it acquires again — on a remote with
 * fence's hook, and on a plain remote without hooks (a stand-in for github.com) where the expected SHA
 * the lease recorded is the fence.
 *
 * <p>Runs once per store implementation (subclasses).
 */
@ProcessTest
abstract class IncidentTestBase {
    static final String MAIN = "refs/heads/main";
    static final String RESOURCE = "git:app:" + MAIN;

    @TempDir
    Path tmp;

    GitFixture git;
    FakeClock clock;
    FenceCli fence;
    String store;

    /** The store URL for this test (a file under {@code tmp}, or a private redis-server). */
    protected abstract String storeUrl(Path tmp);

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        store = storeUrl(tmp);
        fence = new FenceCli(git.env(Map.of("FENCE_STORE", store)), clock);
    }

    /** A bare repo with fence's pre-receive hook installed through 'fence install --bare'. */
    Path hookedRemote() {
        Path bare = git.bareWithMain("app");
        FenceCli.Run installed = fence.run(
                tmp,
                "install",
                "--bare",
                bare.toString(),
                "--launcher",
                git.launcher().toString(),
                "--store",
                store);
        assertEquals(0, installed.exit(), installed.all());
        return bare;
    }

    JsonNode acquire(Path clone, String holder, String ttl) throws Exception {
        return fence.acquireAppMain(clone, holder, ttl);
    }

    /** {@code fence push} as {@code holder} with the proof {@code grant} returned, as an agent pushes. */
    FenceCli.Run push(Path clone, String holder, JsonNode grant) {
        return fence.run(
                clone,
                "push",
                "--repo",
                "app",
                "--holder",
                holder,
                "--token",
                grant.get("token").asText(),
                "--proof",
                grant.get("proof").asText(),
                "--json");
    }

    void assertPushed(FenceCli.Run r) throws Exception {
        assertEquals(0, r.exit(), r.all());
        assertEquals("pushed", Json.read(r.out()).get("status").asText(), r.all());
    }

    @Test
    void onAHookedRemoteThePausedAgentIsFencedAndFindsFreshStateOnReacquire() throws Exception {
        runIncident(hookedRemote(), true);
    }

    @Test
    void onARemoteWithoutHooksThePausedAgentIsFencedAndFindsFreshStateOnReacquire() throws Exception {
        runIncident(git.bareWithMain("app"), false);
    }

    private void runIncident(Path bare, boolean hooked) throws Exception {
        Path a = git.clone(bare, "agent-a");
        Path b = git.clone(bare, "agent-b");
        String seed = git.tip(bare, MAIN);

        JsonNode grantA = acquire(a, "agent-a", "2s");
        assertEquals(seed, grantA.get("grantSha").asText());
        String a1 = git.commit(a, "notes.txt", "A was here\n", "A: first change");
        FenceCli.Run first = push(a, "agent-a", grantA);
        assertPushed(first);
        assertEquals(hooked, Json.read(first.out()).get("pushOptions").asBoolean(), first.all());
        assertEquals(a1, git.tip(bare, MAIN));

        git.commit(a, "notes.txt", "A was here, then paused\n", "A: second change");
        clock.advance(Duration.ofSeconds(3)); // A pauses past its 2 s TTL

        git.git(b, "pull", "-q", "--ff-only");
        JsonNode grantB = acquire(b, "agent-b", "30s");
        assertEquals(a1, grantB.get("grantSha").asText(), "B's lease records A's pushed tip");
        assertEquals("agent-a", grantB.get("previous").get("holder").asText());
        String b1 = git.commit(b, "notes.txt", "B rewrote it\n", "B: rewrite");
        assertPushed(push(b, "agent-b", grantB));
        assertEquals(b1, git.tip(bare, MAIN));

        FenceCli.Run fenced = push(a, "agent-a", grantA);
        assertEquals(3, fenced.exit(), fenced.all());
        JsonNode f = Json.read(fenced.out());
        assertEquals("fenced", f.get("status").asText());
        String machine = f.get("message").get(0).asText();
        assertTrue(machine.startsWith("FENCED resource=" + RESOURCE + " ref=" + MAIN + " token="), machine);
        assertTrue(machine.endsWith("reason=superseded"), machine);
        assertTrue(fenced.err().contains("Current lease holder: agent-b"), fenced.all());
        assertTrue(fenced.err().contains("NOT a transient error"), fenced.all());
        assertFalse(fenced.all().contains("fp2."), "the proof is never printed");
        assertEquals(b1, git.tip(bare, MAIN), "B's work survives");

        // The FENCED message names the holder and its token; naming them does not make A that holder.
        FenceCli.Run asB = fence.run(a, "push", "--repo", "app", "--holder", "agent-b", "--json");
        assertEquals(2, asB.exit(), asB.all());
        assertTrue(asB.err().contains("needs the proof its grant returned"), asB.all());
        FenceCli.Run releaseB = fence.run(
                a,
                "lease",
                "release",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-b",
                "--token",
                grantB.get("token").asText());
        assertEquals(2, releaseB.exit(), releaseB.all());
        assertEquals(b1, git.tip(bare, MAIN), "B's work survives");

        FenceCli.Run released = fence.run(
                b,
                "lease",
                "release",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-b",
                "--token",
                grantB.get("token").asText(),
                "--proof",
                grantB.get("proof").asText());
        assertEquals(0, released.exit(), released.all());
        JsonNode again = acquire(a, "agent-a", "30s");
        assertEquals(b1, again.get("grantSha").asText(), "the new grant records B's tip");
        assertTrue(again.get("token").asLong() > grantB.get("token").asLong());
        assertEquals("agent-b", again.get("previous").get("holder").asText());
        assertEquals(
                grantB.get("token").asLong(), again.get("previous").get("token").asLong());
        JsonNode tip = again.get("tip");
        if (hooked) {
            // The hook recorded who wrote the tip under which token.
            assertEquals(b1, tip.get("sha").asText(), again.toString());
            assertEquals(grantB.get("token").asLong(), tip.get("token").asLong());
            assertEquals("agent-b", tip.get("holder").asText());
        } else {
            assertTrue(tip.isNull(), "without a hook no write is admitted, so none is recorded: " + again);
        }
    }

    @Test
    void onAHookedRemoteTheHookFencesAPushThatPassedTheLeaseCheck() throws Exception {
        Path bare = hookedRemote();
        Path a = git.clone(bare, "agent-a");
        Path b = git.clone(bare, "agent-b");
        String seed = git.tip(bare, MAIN);
        JsonNode grantA = acquire(a, "agent-a", "2s");
        long tokenA = grantA.get("token").asLong();
        git.commit(a, "notes.txt", "A\n", "A: change");

        PushOutcome o;
        try (LeaseStore s = Stores.open(store, StoreOptions.defaults());
                LeaseOperations leases = new LeaseService(s, clock)) {
            // A checks its lease, then stops right there; B takes the lease meanwhile but writes nothing,
            // so the expected SHA still matches: only the hook's token check can stop A.
            o = new FencedPush(leases, new GitRemotes(git.env()))
                    .pausingBeforePush(() -> {
                        clock.advance(Duration.ofSeconds(3));
                        try {
                            acquire(b, "agent-b", "30s");
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    })
                    .push(new FencedPush.Request(
                            a,
                            "origin",
                            null,
                            null,
                            "app",
                            "agent-a",
                            0,
                            grantA.get("proof").asText()));
            List<LedgerEvent> rejects =
                    s.query(new LedgerQuery(RESOURCE, null, null, null, null, Set.of(EventType.REJECT), 0));
            assertEquals(1, rejects.size(), rejects.toString());
            assertEquals(GitFixture.PUSHER, rejects.get(0).pusher(), "recorded by the remote's hook");
        }
        PushOutcome.Fenced f = assertInstanceOf(PushOutcome.Fenced.class, o);
        assertTrue(f.attempted());
        assertEquals(tokenA, f.token());
        String machine = f.lines().get(0);
        assertTrue(machine.startsWith("FENCED resource=" + RESOURCE + " ref=" + MAIN + " token=" + tokenA), machine);
        assertTrue(machine.endsWith("reason=superseded"), machine);
        assertEquals(seed, git.tip(bare, MAIN));
    }

    @Test
    void onARemoteWithoutHooksTheExpectedShaFencesAPushThatPassedTheLeaseCheck() throws Exception {
        Path bare = git.bareWithMain("app");
        Path a = git.clone(bare, "agent-a");
        Path b = git.clone(bare, "agent-b");
        String seed = git.tip(bare, MAIN);
        JsonNode grantA = acquire(a, "agent-a", "2s");
        long tokenA = grantA.get("token").asLong();
        String a1 = git.commit(a, "notes.txt", "A\n", "A: change");
        String[] b1 = new String[1];

        PushOutcome o;
        try (LeaseOperations leases = new LeaseService(Stores.open(store, StoreOptions.defaults()), clock)) {
            o = new FencedPush(leases, new GitRemotes(git.env()))
                    .pausingBeforePush(() -> {
                        clock.advance(Duration.ofSeconds(3));
                        try {
                            JsonNode grantB = acquire(b, "agent-b", "30s");
                            b1[0] = git.commit(b, "notes.txt", "B\n", "B: change");
                            assertPushed(push(b, "agent-b", grantB));
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    })
                    .push(new FencedPush.Request(
                            a,
                            "origin",
                            null,
                            null,
                            "app",
                            "agent-a",
                            0,
                            grantA.get("proof").asText()));
        }
        PushOutcome.Fenced f = assertInstanceOf(PushOutcome.Fenced.class, o);
        assertTrue(f.attempted());
        assertEquals(seed, f.oldSha());
        assertEquals(a1, f.newSha());
        String machine = f.lines().get(0);
        assertTrue(machine.startsWith("FENCED resource=" + RESOURCE + " ref=" + MAIN + " token=" + tokenA), machine);
        assertTrue(machine.endsWith("reason=remote-changed"), machine);
        String text = String.join("\n", f.lines());
        assertTrue(text.contains(ObjectIds.abbreviate(b1[0])), text);
        assertTrue(text.contains("agent-b"), text);
        assertNotNull(b1[0]);
        assertEquals(b1[0], git.tip(bare, MAIN), "B's work survives");
    }
}
