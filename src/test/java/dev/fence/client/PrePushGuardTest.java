package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pre-push guard in an agent's clone, with the real git running the installed hook (which starts
 * fence in its own JVM). The remote has no fence hook, so what the guard lets through lands.
 */
@ProcessTest
class PrePushGuardTest {
    static final String MAIN = "refs/heads/main";

    @TempDir
    Path tmp;

    GitFixture git;
    FakeClock clock;
    FenceCli fence;
    String store;
    Path bare;

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        store = "sqlite:" + tmp.resolve("fence.db");
        fence = new FenceCli(
                git.env(Map.of(
                        "FENCE_STORE", store, "FENCE_LAUNCHER", git.launcher().toString())),
                clock);
        bare = git.bareWithMain("app");
    }

    private Path guardedClone(String holder) {
        Path clone = git.clone(bare, holder);
        FenceCli.Run r = fence.run(
                tmp,
                "guard",
                "install",
                "--clone",
                clone.toString(),
                "--holder",
                holder,
                "--repo",
                "app",
                "--store",
                store);
        assertEquals(0, r.exit(), r.all());
        return clone;
    }

    private JsonNode acquire(Path clone, String holder, String ttl) {
        return fence.acquireAppMain(clone, holder, ttl);
    }

    private void fencePush(Path clone, String holder, JsonNode grant) {
        FenceCli.Run r = fence.run(
                clone,
                "push",
                "--repo",
                "app",
                "--holder",
                holder,
                "--token",
                grant.get("token").asText(),
                "--proof",
                grant.get("proof").asText());
        assertEquals(0, r.exit(), r.all());
    }

    @Test
    void installWritesAMarkedHookThatRunsTheLauncherAndConfiguresTheClone() throws Exception {
        Path a = guardedClone("agent-a");
        String hook = Files.readString(a.resolve(".git/hooks/pre-push"));
        assertTrue(hook.contains("\n" + GuardInstaller.MARKER + "\n"), hook);
        assertTrue(hook.contains("exec '" + git.launcher() + "' guard pre-push \"$@\""), hook);
        assertTrue(hook.contains("--no-verify"), "the hook says it is only a guardrail");
        assertTrue(Files.isExecutable(a.resolve(".git/hooks/pre-push")));
        assertEquals("agent-a", git.git(a, "config", "fence.holder"));
        assertEquals("app", git.git(a, "config", "fence.repoId"));
        assertEquals(store, git.git(a, "config", "fence.store"));
        // Re-running over its own hook is fine.
        assertEquals(0, fence.run(a, "guard", "install", "--holder", "agent-a").exit());
    }

    @Test
    void installRefusesAForeignHookUnlessForced() throws Exception {
        Path a = git.clone(bare, "agent-a");
        Path hook = a.resolve(".git/hooks/pre-push");
        Files.writeString(hook, "#!/bin/sh\necho mine\n");
        FenceCli.Run refused = fence.run(a, "guard", "install", "--holder", "agent-a", "--repo", "app");
        assertEquals(6, refused.exit(), refused.all());
        assertEquals("#!/bin/sh\necho mine\n", Files.readString(hook));
        assertFalse(GitProcess.runAllowingFailure(a, git.env(), "config", "fence.holder")
                        .exit()
                == 0);

        FenceCli.Run forced = fence.run(a, "guard", "install", "--holder", "agent-a", "--repo", "app", "--force");
        assertEquals(0, forced.exit(), forced.all());
        assertTrue(Files.readString(hook).contains(GuardInstaller.MARKER));
        assertEquals("#!/bin/sh\necho mine\n", Files.readString(a.resolve(".git/hooks/pre-push.before-fence")));
    }

    @Test
    void theGuardStopsAPlainForcePushOfASupersededAgentAndNoVerifySkipsIt() {
        Path a = guardedClone("agent-a");
        Path b = guardedClone("agent-b");
        JsonNode grantA = acquire(a, "agent-a", "2s");
        git.commit(a, "notes.txt", "A\n", "A: change");
        fencePush(a, "agent-a", grantA);

        clock.advance(Duration.ofSeconds(3)); // A pauses past its TTL; B takes over and pushes
        git.git(b, "pull", "-q", "--ff-only");
        JsonNode grantB = acquire(b, "agent-b", "30s");
        String b1 = git.commit(b, "notes.txt", "B\n", "B: change");
        fencePush(b, "agent-b", grantB);

        // A wakes up and, instead of 'fence push', types git push --force.
        git.git(a, "commit", "-q", "--amend", "-m", "A: reworded");
        String a2 = git.head(a);
        GitProcess.Result forced = git.gitAllowingFailure(a, "push", "--force", "origin", "main");
        assertNotEquals(0, forced.exit(), forced.stderr());
        assertTrue(
                forced.stderr().contains("FENCED resource=git:app:refs/heads/main ref=refs/heads/main"),
                forced.stderr());
        assertTrue(forced.stderr().contains("reason=superseded"), forced.stderr());
        assertTrue(forced.stderr().contains("Current lease holder: agent-b"), forced.stderr());
        assertEquals(b1, git.tip(bare, MAIN), "nothing was sent");

        // Documented: the guard is a guardrail; --no-verify skips it (here nothing else stops the push,
        // which is why the remote's hook and the expected SHA of 'fence push' are the fence).
        GitProcess.Result bypass = git.gitAllowingFailure(a, "push", "--no-verify", "--force", "origin", "main");
        assertEquals(0, bypass.exit(), bypass.stderr());
        assertEquals(a2, git.tip(bare, MAIN));

        // B still holds its lease, but the remote moved under it: the guard refuses B's plain push too.
        String b2 = git.commit(b, "notes.txt", "B again\n", "B: more");
        GitProcess.Result moved = git.gitAllowingFailure(b, "push", "--force", "origin", "main");
        assertNotEquals(0, moved.exit(), moved.stderr());
        assertTrue(moved.stderr().contains("reason=remote-changed"), moved.stderr());
        assertEquals(a2, git.tip(bare, MAIN));
        // 'fence push' from the guarded clone is not run through its own guard (it makes the same checks
        // itself): the moved remote is FENCED remote-changed, exit 3, not a failed push.
        FenceCli.Run fencedPush = fence.run(
                b,
                "push",
                "--repo",
                "app",
                "--holder",
                "agent-b",
                "--token",
                grantB.get("token").asText(),
                "--proof",
                grantB.get("proof").asText(),
                "--json");
        assertEquals(3, fencedPush.exit(), fencedPush.all());
        assertTrue(fencedPush.out().contains("reason=remote-changed"), fencedPush.all());
        assertEquals(a2, git.tip(bare, MAIN));

        // Once B's lease records the remote's real tip again, the guard lets a holder's push through.
        // B shows its grant: in direct mode a live lease is not taken again by naming its holder.
        assertEquals(4, fence.runAcquireAppMain(b, "agent-b").exit());
        FenceCli.Run reacquired = fence.runAcquireAppMain(
                b,
                "agent-b",
                "--token",
                grantB.get("token").asText(),
                "--proof",
                grantB.get("proof").asText());
        assertEquals(0, reacquired.exit(), reacquired.all());
        GitProcess.Result allowed = git.gitAllowingFailure(b, "push", "--force", "origin", "main");
        assertEquals(0, allowed.exit(), allowed.stderr());
        assertEquals(b2, git.tip(bare, MAIN));
    }
}
