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

    /**
     * git reads a short bundle letter by letter, with a value-taking letter eating the rest of the word,
     * and a long option by any unique prefix, negated or not: a guard that reads them otherwise can be
     * told "dry run" about a real push. (GitPushArgsAgainstGitTest checks these readings against git.)
     */
    @Test
    void optionsAreReadAsGitReadsThem() {
        for (String c : List.of(
                "git push -ofence=1 --force origin HEAD:main",
                "git push -on origin main",
                "git push -o -n origin main",
                "git push -o fence=1 origin main",
                "git push --push-option=fence=1 origin main",
                "git push --push-option -n origin main",
                "git push --dry-run --no-dry origin HEAD:main",
                "git push --dry-run --no-dry-run origin main",
                "git push -n --no-dry-r origin main",
                "git push -fon origin refs/tags/v1",
                "git push --force-w origin refs/tags/v1",
                "git push --force-with-lease=refs/tags/v1:0123abc --no-force-with-lease -f origin refs/tags/v1",
                "git push --mirror --no-force origin",
                "git push --br origin",
                "git push -- origin main",
                "git push -- origin -n")) {
            assertTrue(blocked(c), c);
        }
        for (String c : List.of(
                "git push -nf origin main",
                "git push -fn origin main",
                "git push -vn origin main",
                "git push --dry origin main",
                "git push --dry-r origin main",
                "git push --no-dry-run --dry-run origin main",
                "git push origin main --dry-run",
                "git push -n -o fence=1 origin main",
                "git push -ofence=1 -n origin main",
                "git push -nofence=1 origin main",
                "git push --push-opt=fence=1 -n origin main",
                "git push -n -- origin main",
                "git push -f --no-force origin refs/tags/v1",
                "git push --force --no-mirror origin refs/tags/v1",
                "git push --force-w=refs/tags/v1:0123abc origin refs/tags/v1",
                "git push --help")) {
            assertEquals(false, blocked(c), c);
        }
    }

    /** What git would refuse to parse, the guard does not guess at: it blocks, and says why. */
    @Test
    void optionsGitCannotResolveAreBlockedAsUnjudged() {
        for (String c : List.of(
                "git push --n origin main",
                "git push --no -n origin main",
                "git push --d origin main",
                "git push --fo origin refs/tags/v1",
                "git push --frobnicate -n origin main",
                "git push --dry-run=yes origin main",
                "git push -n --repo",
                "git push -n -o",
                "git push -force origin refs/tags/v1",
                "git push -nx origin main")) {
            String why = ClaudeCodeHooks.guardBash(c, "agent-a", "app").orElse("");
            assertTrue(why.contains("cannot judge"), c + " -> " + why);
        }
        String why = ClaudeCodeHooks.guardBash("git push --n origin main", "agent-a", "app")
                .orElseThrow();
        assertTrue(why.contains("ambiguous option '--n'"), why);
    }

    @Test
    void theReasonSaysWhatToUseInstead() {
        String why = ClaudeCodeHooks.guardBash("git push origin main", "agent-a", "app")
                .orElseThrow();
        assertTrue(why.contains("blocked 'git push origin main'"), why);
        assertTrue(why.contains("fence push --repo app --holder agent-a"), why);
    }

    /**
     * The forms a goal-seeking model reaches for when a plain push is blocked: another interpreter, a
     * wrapper with options, a variable or substitution as the program, git's other pushing commands, an
     * alias defined on the spot. The guard cannot follow them, so it blocks a line that mentions git and
     * push unless every command in it is clearly something else.
     */
    @Test
    void pushesHiddenFromTheParserAreBlockedToo() {
        for (String c : List.of(
                "sh -c 'git push origin main'",
                "bash -c \"git push -f\"",
                "eval git push origin main",
                "eval \"git push origin main\"",
                "$(echo git) push origin main",
                "g=git; $g push origin main",
                "xargs git push < args",
                "echo origin main | xargs git push",
                "env -i git push origin main",
                "env -u HOME git push origin main",
                "sudo -u bot git push origin main",
                "command -p git push origin main",
                "exec -a x git push origin main",
                "timeout 30 git push origin main",
                "nice -n 5 git push origin main",
                "echo git push origin main | sh",
                "bash <<< 'git push origin main'",
                "bash <<EOF\ngit push origin main\nEOF",
                "\"$(which git)\" push origin main",
                "git send-pack origin main",
                "git subtree push --prefix=lib origin main",
                "git -c alias.p=push p origin main",
                "git config alias.p push && git p origin main",
                "git submodule foreach git push origin main",
                "git rebase -x 'git push origin main' HEAD~1",
                "fence exec --resource r -- git push origin main",
                "git push --dry-run --no-dry-run origin main",
                "git push --force-with-lease=refs/tags/v1:0123abc --force origin refs/tags/v1",
                "git push origin HEAD:main --force",
                "git push origin +main",
                "git push --delete origin main",
                "git \\\n push origin main",
                "/usr/lib/git-core/git-push origin main",
                "git-push origin main",
                "/usr/lib/git-core/git-send-pack ../remote.git main")) {
            assertTrue(blocked(c), c);
        }
    }

    @Test
    void aLineThatMentionsPushButRunsNothingHiddenPasses() {
        for (String c : List.of(
                "git commit -m 'push the fix'",
                "cd repo && git log --grep push",
                "grep -rn 'git push' docs | head -5",
                "fence push --repo app --holder agent-a --branch main",
                "git status && fence push --repo app --holder agent-a")) {
            assertEquals(false, blocked(c), c);
        }
    }

    @Test
    void aHiddenPushIsToldWhyAndWhatToUse() {
        String why = ClaudeCodeHooks.guardBash("sh -c 'git push origin main'", "agent-a", "app")
                .orElseThrow();
        assertTrue(why.contains("cannot tell"), why);
        assertTrue(why.contains("fence push --repo app --holder agent-a"), why);
    }
}
