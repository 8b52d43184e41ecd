package dev.fence.integrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The Bash guard, against the ways an agent writes (or hides) a push. */
class ClaudeCodeHooksTest {
    private static boolean blocked(String command) {
        return ClaudeCodeHooks.guardBash(command, "agent-a", "app").isPresent();
    }

    @Test
    void plainPushesOfBranchesAreBlockedHoweverTheyAreWritten() {
        for (String c : List.of(
                "git push",
                "git push origin main",
                "git push -u origin feature/x",
                "git -C ../other push origin main",
                "git -c push.default=current push",
                "GIT_TRACE=0 git push origin HEAD",
                "/usr/bin/git push origin main",
                "cd repo && git push origin main",
                "make test; git push origin main",
                "true || git push origin main",
                "echo \"$(git push origin main)\"",
                "(git push origin main)",
                "sudo git push origin main",
                "git push origin :main",
                "git push --all origin",
                "git push --mirror origin",
                "git push origin 'ma'in",
                "git push --force-with-lease=main:abc123 origin main",
                "git push origin refs/tags/v1 main")) {
            assertTrue(blocked(c), c);
        }
    }

    @Test
    void forcedTagPushesNeedAnExplicitExpectedSha() {
        assertTrue(blocked("git push --force origin refs/tags/v1"));
        assertTrue(blocked("git push -f origin refs/tags/v1"));
        assertTrue(blocked("git push origin +refs/tags/v1"));
        assertTrue(blocked("git push --force-with-lease origin refs/tags/v1"));
        assertTrue(blocked("git push --force-with-lease=refs/tags/v1 origin refs/tags/v1"));
        assertEquals(false, blocked("git push --force-with-lease=refs/tags/v1:0123abc origin refs/tags/v1"));
    }

    @Test
    void everythingElsePasses() {
        for (String c : List.of(
                "fence push --repo app --holder agent-a",
                "git status",
                "git log --grep push",
                "echo git push",
                "git push --dry-run origin main",
                "git push -n origin main",
                "git push origin refs/tags/v1.0",
                "git push --tags",
                "git fetch origin",
                "grep -r 'git push' docs")) {
            assertEquals(false, blocked(c), c);
        }
        assertEquals(false, blocked(null));
    }

    @Test
    void theReasonSaysWhatToUseInstead() {
        String why = ClaudeCodeHooks.guardBash("git push origin main", "agent-a", "app")
                .orElseThrow();
        assertTrue(why.contains("blocked 'git push origin main'"), why);
        assertTrue(why.contains("fence push --repo app --holder agent-a"), why);
    }
}
