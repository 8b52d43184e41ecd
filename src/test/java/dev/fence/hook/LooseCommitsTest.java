package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.RefUpdate;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ancestry read from loose commits: only what they show is answered; anything else is left to git. */
class LooseCommitsTest {
    @TempDir
    Path dir;

    private String git(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        pb.environment().put("HOME", dir.toString());
        pb.environment().put("GIT_AUTHOR_NAME", "t");
        pb.environment().put("GIT_AUTHOR_EMAIL", "t@t");
        pb.environment().put("GIT_COMMITTER_NAME", "t");
        pb.environment().put("GIT_COMMITTER_EMAIL", "t@t");
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    @Test
    void aChainOfLooseCommitsShowsAncestryAndNothingElse() throws Exception {
        git("init", "-q", "--bare", "repo.git");
        Path repo = dir.resolve("repo.git");
        String tree = git("--git-dir", repo.toString(), "hash-object", "-t", "tree", "-w", "--stdin");
        String a = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "a");
        String b = git("--git-dir", repo.toString(), "commit-tree", tree, "-p", a, "-m", "b");
        String c = git("--git-dir", repo.toString(), "commit-tree", tree, "-p", b, "-m", "c");
        String other = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "other");
        LooseCommits loose = LooseCommits.of(Map.of(), repo);
        assertEquals(List.of(b), loose.parents(c));
        assertTrue(loose.reaches(b, c));
        assertTrue(loose.reaches(a, c), "two generations back");
        assertTrue(loose.reaches(c, c));
        assertFalse(loose.reaches(other, c), "not in the history");
        assertFalse(loose.reaches(c, a), "a descendant is no ancestor");
        assertNull(loose.parents("0".repeat(40)), "no such object");

        GitAncestry ancestry = new GitAncestry(Map.of("PATH", System.getenv("PATH")), repo, "git");
        assertEquals(Boolean.TRUE, ancestry.knownAncestor(a, c));
        assertNull(ancestry.knownAncestor(other, c), "unknown, not false: git decides");
        assertFalse(ancestry.isAncestor(other, c));

        // Packed objects are not read here: the answer is left to git.
        git("--git-dir", repo.toString(), "update-ref", "refs/heads/main", c);
        git("--git-dir", repo.toString(), "repack", "-a", "-d", "-q");
        git("--git-dir", repo.toString(), "prune-packed");
        assertFalse(loose.reaches(b, c));
        assertNull(ancestry.knownAncestor(b, c));
        assertTrue(ancestry.isAncestor(b, c), "git still answers");
    }

    @Test
    void whatAHookReadsAheadIsWhatTheAdmissionRuleIsToldLater() throws Exception {
        git("init", "-q", "--bare", "repo.git");
        Path repo = dir.resolve("repo.git");
        String tree = git("--git-dir", repo.toString(), "hash-object", "-t", "tree", "-w", "--stdin");
        String a = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "a");
        String b = git("--git-dir", repo.toString(), "commit-tree", tree, "-p", a, "-m", "b");
        String zero = "0".repeat(40);
        GitAncestry ancestry = new GitAncestry(Map.of("PATH", System.getenv("PATH")), repo, "git");
        // A fast-forward is read; a create, a delete and ids that are not object ids are skipped, quietly.
        ancestry.readAhead(List.of(
                new RefUpdate(a, b, "refs/heads/main"),
                new RefUpdate(zero, b, "refs/heads/new"),
                new RefUpdate(b, zero, "refs/heads/old"),
                new RefUpdate("not-an-id", b, "refs/heads/odd")));

        // The loose objects go (as if packed meanwhile): the answer read ahead is the one given.
        git("--git-dir", repo.toString(), "update-ref", "refs/heads/main", b);
        git("--git-dir", repo.toString(), "repack", "-a", "-d", "-q");
        git("--git-dir", repo.toString(), "prune-packed");
        assertEquals(Boolean.TRUE, ancestry.knownAncestor(a, b));
        assertTrue(ancestry.isAncestor(a, b));
        assertNull(
                new GitAncestry(Map.of("PATH", System.getenv("PATH")), repo, "git").knownAncestor(a, b),
                "read now, the loose commits no longer show it");
    }

    @Test
    void theQuarantineAndTheAlternatesAreSearchedAsGitDoes() {
        Path repo = Path.of("/srv/git/app.git");
        LooseCommits loose = LooseCommits.of(
                Map.of(
                        "GIT_OBJECT_DIRECTORY", "/srv/git/app.git/objects/incoming-x",
                        "GIT_ALTERNATE_OBJECT_DIRECTORIES", "/srv/git/app.git/objects"),
                repo);
        assertNull(loose.parents("1".repeat(40)));
    }
}
