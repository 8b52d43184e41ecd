package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.ObjectIds;
import dev.fence.json.Json;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.nio.file.Path;
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
    Path bare;
    Path agent;

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        String store = "sqlite:" + tmp.resolve("fence.db");
        fence = new FenceCli(
                git.env(Map.of("FENCE_STORE", store)),
                new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS)));
        bare = git.bareWithMain("app");
        agent = git.clone(bare, "agent");
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
        FenceCli.Run push = fence.run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
        assertEquals(3, push.exit(), push.all());
        JsonNode o = Json.read(push.out());
        assertEquals("fenced", o.get("status").asText());
        assertEquals(seed, o.get("oldSha").asText());
        assertEquals(mine, o.get("newSha").asText());
        assertTrue(o.get("message").get(0).asText().endsWith("reason=remote-changed"), o.toString());
        assertTrue(push.err().contains("at " + ObjectIds.abbreviate(theirs)), push.all());
        assertTrue(push.err().contains("recorded " + ObjectIds.abbreviate(seed)), push.all());

        assertEquals(theirs, git.tip(bare, "refs/heads/main"), "nothing was overwritten");
        assertEquals(seed, recordedSha(), "a refused push does not move the recorded SHA");

        // A retry is refused the same way: the agent cannot make the lease agree with the remote.
        assertEquals(
                3,
                fence.run(agent, "push", "--repo", "app", "--holder", "agent").exit());
        assertEquals(seed, recordedSha());
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
            FenceCli.Run r = fence.run(agent, args);
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
        assertEquals(ObjectIds.ZERO, Json.read(acquired.out()).get("grantSha").asText());

        git.git(agent, "checkout", "-q", "-b", "feature");
        String mine = git.commit(agent, "f.txt", "feature\n", "feature work");
        // Someone else creates the branch first: the lease said it must not exist.
        Path human = git.clone(bare, "human");
        git.git(human, "push", "-q", "origin", "main:feature");
        FenceCli.Run refused = fence.run(agent, "push", "--repo", "app", "--holder", "agent");
        assertEquals(3, refused.exit(), refused.all());
        assertTrue(refused.err().contains("recorded no branch"), refused.all());

        git.git(human, "push", "-q", "origin", ":feature");
        FenceCli.Run pushed = fence.run(agent, "push", "--repo", "app", "--holder", "agent", "--json");
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
        FenceCli.Run push = fence.run(agent, "push", "--repo", "app", "--holder", "agent");
        assertEquals(6, push.exit(), push.all());
        assertTrue(push.err().contains("--git-remote"), push.all());
    }
}
