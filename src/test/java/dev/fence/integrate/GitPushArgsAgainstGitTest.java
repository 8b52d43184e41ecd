package dev.fence.integrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.GitFixture;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Bash guard's reading of {@code git push}'s options against git's own: each spelling is judged by
 * the guard and then run by real git against a local bare repository, and the guard must block exactly
 * the ones that change it. The local {@code main} is one commit ahead of the remote's (a plain push lands)
 * and the local tag {@code v1} differs from the remote's (only a forced push moves it), so for a branch
 * the question is "dry run or not" and for a tag "forced or not".
 */
@ProcessTest
class GitPushArgsAgainstGitTest {
    @TempDir
    Path tmp;

    GitFixture git;
    Path bare;
    Path clone;
    String remoteMain;
    String remoteTag;

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        bare = git.bareWithMain("remote");
        git.git(bare, "config", "receive.advertisePushOptions", "true");
        clone = git.clone(bare, "clone");
        git.git(clone, "tag", "v1");
        git.git(clone, "push", "-q", "origin", "refs/tags/v1");
        remoteMain = git.tip(bare, "refs/heads/main");
        remoteTag = git.tip(bare, "refs/tags/v1");
        git.commit(clone, "f", "new\n", "ahead");
        git.git(clone, "tag", "-f", "v1");
    }

    /** Judges {@code line} with the guard and runs it with git; fails when they disagree. */
    private void agree(String line) {
        List<List<String>> commands = BashWords.commands(line);
        assertEquals(1, commands.size(), line);
        List<String> words = commands.get(0);
        Optional<String> verdict = GitPushCheck.refusal(line, commands);
        git.git(bare, "update-ref", "refs/heads/main", remoteMain);
        git.git(bare, "update-ref", "refs/tags/v1", remoteTag);
        GitProcess.Result ran =
                git.gitAllowingFailure(clone, words.subList(1, words.size()).toArray(String[]::new));
        boolean changed = !remoteMain.equals(git.tip(bare, "refs/heads/main"))
                || !remoteTag.equals(git.tip(bare, "refs/tags/v1"));
        boolean unjudged = verdict.isPresent() && verdict.get().contains("cannot judge");
        String seen = line + "\n  guard: " + verdict.orElse("allowed") + "\n  git: exit " + ran.exit() + " "
                + ran.stderr().strip();
        assertEquals(changed, verdict.isPresent() && !unjudged, seen);
        if (unjudged) {
            assertEquals(129, ran.exit(), "git refused to parse it too: " + seen);
        }
    }

    @Test
    void shortOptionBundlesAreReadAsGitReadsThem() {
        for (String line : List.of(
                "git push -ofence=1 --force origin HEAD:main",
                "git push -ofence=1 -f origin refs/tags/v1",
                "git push -on origin HEAD:main",
                "git push -o fence=1 origin HEAD:main",
                "git push -o -n origin HEAD:main",
                "git push -fon origin refs/tags/v1",
                "git push -nf origin refs/tags/v1",
                "git push -fn origin HEAD:main",
                "git push -n -ofence=1 origin HEAD:main",
                "git push -nofence=1 origin HEAD:main",
                "git push -vn origin HEAD:main",
                "git push -fq origin refs/tags/v1",
                "git push -force origin refs/tags/v1",
                "git push -nx origin HEAD:main",
                "git push origin HEAD:main -n",
                "git push origin refs/tags/v1 -f")) {
            agree(line);
        }
    }

    @Test
    void longOptionsResolveByNameNegationAndUniquePrefix() {
        for (String line : List.of(
                "git push --dry-run --no-dry origin HEAD:main",
                "git push --dry-run --no-dry-run origin HEAD:main",
                "git push --no-dry-run --dry-run origin HEAD:main",
                "git push --dry origin HEAD:main",
                "git push --dry-r origin HEAD:main",
                "git push --d origin HEAD:main",
                "git push --n origin HEAD:main",
                "git push --no origin HEAD:main",
                "git push --no- origin HEAD:main",
                "git push --dry-run=yes origin HEAD:main",
                "git push --push-option=fence=1 origin HEAD:main",
                "git push --push-option fence=1 origin HEAD:main",
                "git push --push-opt -n origin HEAD:main",
                "git push --frobnicate origin HEAD:main",
                "git push --fo origin refs/tags/v1",
                "git push --forc origin refs/tags/v1",
                "git push --for origin refs/tags/v1",
                "git push -f --no-force origin refs/tags/v1",
                "git push -f --no-forc origin refs/tags/v1",
                "git push --force --no-mirror origin refs/tags/v1",
                "git push --verify -n origin HEAD:main",
                "git push --repo origin -n HEAD:main")) {
            agree(line);
        }
    }

    @Test
    void optionsEndAtTheDoubleDash() {
        for (String line : List.of(
                "git push -n -- origin HEAD:main",
                "git push -- origin HEAD:main",
                "git push --end-of-options origin HEAD:main",
                "git push --dry-run --end-of-options origin HEAD:main")) {
            agree(line);
        }
    }

    @Test
    void theAttacksSpellingsArePushesAndAreBlocked() {
        for (String line : List.of(
                "git push -ofence=1 --force origin HEAD:main", "git push --dry-run --no-dry origin HEAD:main")) {
            Optional<String> verdict = GitPushCheck.refusal(line, BashWords.commands(line));
            assertTrue(verdict.isPresent(), line);
            git.git(bare, "update-ref", "refs/heads/main", remoteMain);
            List<String> words = BashWords.commands(line).get(0);
            git.gitAllowingFailure(clone, words.subList(1, words.size()).toArray(String[]::new));
            assertNotEquals(remoteMain, git.tip(bare, "refs/heads/main"), "git pushed: " + line);
        }
    }
}
