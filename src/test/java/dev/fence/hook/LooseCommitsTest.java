package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Printable;
import dev.fence.core.RefUpdate;
import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ancestry read from loose commits: only what they show is answered; anything else is left to git. */
@ProcessTest
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

    /** Runs git in {@code repo} and returns its exit code (output discarded). */
    private static int gitExit(Path repo, String... args) {
        try {
            return gitExitChecked(repo, args);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static int gitExitChecked(Path repo, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("git", "--git-dir", repo.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        Process p = pb.start();
        p.getOutputStream().close();
        p.getInputStream().readAllBytes();
        return p.waitFor();
    }

    /** The parents git reads in {@code commit} (its tree unread), or null when git cannot read it. */
    private static List<String> gitParents(Path repo, String commit) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(
                        "git", "--git-dir", repo.toString(), "rev-list", "--parents", "--no-walk", commit)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0) {
            return null;
        }
        List<String> words = List.of(out.split(" "));
        return words.subList(1, words.size());
    }

    /** Writes commit objects of any content as loose objects, the way a pusher can craft them. */
    private List<String> writeLiterally(Path repo, List<byte[]> contents) throws IOException, InterruptedException {
        Path files = java.nio.file.Files.createTempDirectory(dir, "objects");
        StringBuilder paths = new StringBuilder();
        for (int i = 0; i < contents.size(); i++) {
            Path f = files.resolve("c" + i);
            java.nio.file.Files.write(f, contents.get(i));
            paths.append(f).append('\n');
        }
        ProcessBuilder pb = new ProcessBuilder(
                "git",
                "--git-dir",
                repo.toString(),
                "hash-object",
                "-t",
                "commit",
                "--literally",
                "-w",
                "--stdin-paths");
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        Process p = pb.start();
        p.getOutputStream().write(paths.toString().getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        List<String> ids = List.of(out.strip().split("\n"));
        assertEquals(contents.size(), ids.size());
        return ids;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static final String SIGNATURE = "t <t@t> 1700000000 +0000";

    /**
     * Commits written byte by byte, each read by git differently from a naive parser: for each, the loose
     * reader answers nothing (so the hook asks git) unless its answer is git's.
     */
    @Test
    void craftedCommitsAreLeftToGitUnlessReadAsGitReadsThem() throws Exception {
        git("init", "-q", "--bare", "repo.git");
        Path repo = dir.resolve("repo.git");
        String tree = git("--git-dir", repo.toString(), "hash-object", "-t", "tree", "-w", "--stdin");
        String old = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "old tip");
        String tail = "author " + SIGNATURE + "\ncommitter " + SIGNATURE + "\n\nrewrite\n";
        Map<String, String> crafted = new java.util.LinkedHashMap<>();
        crafted.put("duplicated tree header", "tree " + tree + "\ntree " + tree + "\nparent " + old + "\n" + tail);
        crafted.put(
                "parent after author",
                "tree " + tree + "\nauthor " + SIGNATURE + "\nparent " + old + "\ncommitter " + SIGNATURE + "\n\nm\n");
        crafted.put("parent in uppercase hex", "tree " + tree + "\nparent " + old.toUpperCase() + "\n" + tail);
        crafted.put("two spaces after parent", "tree " + tree + "\nparent  " + old + "\n" + tail);
        crafted.put("space before the newline", "tree " + tree + "\nparent " + old + " \n" + tail);
        crafted.put("carriage return", "tree " + tree + "\nparent " + old + "\r\n" + tail);
        crafted.put(
                "NUL inside the parent line",
                "tree " + tree + "\nparent " + old.substring(0, 20) + "\0" + old.substring(21) + "\n" + tail);
        crafted.put(
                "NUL in the author line",
                "tree " + tree + "\nparent " + old + "\nauthor t\0 <t@t> 1 +0000\n" + "committer " + SIGNATURE
                        + "\n\nm\n");
        crafted.put("a SHA-256 length parent", "tree " + tree + "\nparent " + old + "0".repeat(24) + "\n" + tail);
        crafted.put("no tree first", "parent " + old + "\ntree " + tree + "\n" + tail);
        crafted.put(
                "a second parent block",
                "tree " + tree + "\nparent " + old + "\n" + "author " + SIGNATURE + "\nparent " + old + "\ncommitter "
                        + SIGNATURE + "\n\nm\n");
        crafted.put("canonical", "tree " + tree + "\nparent " + old + "\n" + tail);
        List<byte[]> contents = new ArrayList<>();
        crafted.values().forEach(c -> contents.add(bytes(c)));
        List<String> ids = writeLiterally(repo, contents);
        LooseCommits loose = LooseCommits.of(Map.of(), repo);
        int i = 0;
        for (String what : crafted.keySet()) {
            String id = ids.get(i++);
            boolean gitSays = gitExit(repo, "merge-base", "--is-ancestor", old, id) == 0;
            boolean looseSays = loose.reaches(old, id);
            if (what.equals("canonical")) {
                assertTrue(looseSays && gitSays, "a plain fast-forward is read without git");
                assertEquals(List.of(old), loose.parents(id));
            } else {
                assertNull(loose.parents(id), what + ": not git's canonical form, so git decides");
                assertFalse(looseSays, what);
            }
            assertEquals(
                    gitSays,
                    new GitAncestry(Map.of("PATH", System.getenv("PATH")), repo, "git").isAncestor(old, id),
                    what + ": the hook's answer is git's");
        }
        assertFalse(
                gitExit(repo, "merge-base", "--is-ancestor", old, ids.get(0)) == 0,
                "git reads a commit with two tree headers as a root commit");
    }

    @Test
    void graftsShallowAndReplaceRefsLeaveEveryAnswerToGit() throws Exception {
        git("init", "-q", "--bare", "repo.git");
        Path repo = dir.resolve("repo.git");
        String tree = git("--git-dir", repo.toString(), "hash-object", "-t", "tree", "-w", "--stdin");
        String a = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "a");
        String b = git("--git-dir", repo.toString(), "commit-tree", tree, "-p", a, "-m", "b");
        assertTrue(LooseCommits.of(Map.of(), repo).reaches(a, b));

        java.nio.file.Files.createDirectories(repo.resolve("info"));
        java.nio.file.Files.writeString(repo.resolve("info/grafts"), b + "\n");
        assertFalse(LooseCommits.of(Map.of(), repo).reaches(a, b), "grafts: git sees b without parents");
        assertTrue(gitExit(repo, "merge-base", "--is-ancestor", a, b) != 0, "as git does");
        java.nio.file.Files.delete(repo.resolve("info/grafts"));

        java.nio.file.Files.writeString(repo.resolve("shallow"), b + "\n");
        assertFalse(LooseCommits.of(Map.of(), repo).reaches(a, b), "a shallow repository");
        java.nio.file.Files.delete(repo.resolve("shallow"));

        String other = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "other");
        git("--git-dir", repo.toString(), "replace", b, other);
        assertFalse(LooseCommits.of(Map.of(), repo).reaches(a, b), "a replace ref: git reads another object");
        assertTrue(gitExit(repo, "merge-base", "--is-ancestor", a, b) != 0, "as git does");
        assertTrue(
                LooseCommits.of(Map.of("GIT_NO_REPLACE_OBJECTS", "1"), repo).reaches(a, b),
                "unless replace refs are off");
        git("--git-dir", repo.toString(), "pack-refs", "--all");
        assertFalse(LooseCommits.of(Map.of(), repo).reaches(a, b), "a packed replace ref");
        assertFalse(LooseCommits.of(Map.of("GIT_GRAFT_FILE", "/x"), dir.resolve("none"))
                .reaches(a, b));
    }

    /**
     * A few hundred commit objects mutated at random (seeded): whatever the loose reader answers, git
     * answers too. It only ever says "yes" (else git is asked), so: its yes is git's yes, and the parents
     * it reads are the parents git reads.
     */
    @Test
    void fuzzedCommitsNeverGetAnAnswerGitWouldNotGive() throws Exception {
        git("init", "-q", "--bare", "repo.git");
        Path repo = dir.resolve("repo.git");
        String tree = git("--git-dir", repo.toString(), "hash-object", "-t", "tree", "-w", "--stdin");
        String p = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "p");
        String q = git("--git-dir", repo.toString(), "commit-tree", tree, "-m", "q");
        String[] lines = {
            "tree " + tree, "parent " + p, "parent " + q, "author " + SIGNATURE, "committer " + SIGNATURE, "", "m"
        };
        java.util.Random random = new java.util.Random(20_240_611L);
        List<byte[]> contents = new ArrayList<>();
        for (int n = 0; n < 300; n++) {
            List<String> l = new ArrayList<>(List.of(lines));
            if (random.nextBoolean()) {
                l.remove(2); // one parent or two
            }
            int mutations = 1 + random.nextInt(3);
            for (int m = 0; m < mutations; m++) {
                mutate(l, random, tree, p, q);
            }
            byte[] c = bytes(String.join("\n", l) + "\n");
            if (random.nextInt(8) == 0) {
                c[random.nextInt(Math.min(c.length, 120))] = (byte) "\0\r\n A aF0g".charAt(random.nextInt(10));
            }
            contents.add(c);
        }
        List<String> ids = writeLiterally(repo, contents);
        LooseCommits loose = LooseCommits.of(Map.of(), repo);
        int read = 0;
        int yes = 0;
        for (int i = 0; i < ids.size(); i++) {
            String id = ids.get(i);
            String shown = Printable.escape(new String(contents.get(i), StandardCharsets.ISO_8859_1), 2000);
            List<String> parents = loose.parents(id);
            if (parents != null) {
                read++;
                List<String> gits = gitParents(repo, id);
                if (gits == null) {
                    // git reads no commit whose parent is missing (a mutated id); nor is such a parent ever
                    // the ancestor asked about, which is a ref's tip and so exists.
                    assertTrue(
                            parents.stream().anyMatch(x -> gitExit(repo, "cat-file", "-e", x) != 0),
                            "git cannot read " + shown);
                } else {
                    assertEquals(gits, parents, "the parents git reads in " + shown);
                }
            }
            for (String ancestor : List.of(p, q)) {
                if (loose.reaches(ancestor, id)) {
                    yes++;
                    assertEquals(
                            0,
                            gitExit(repo, "merge-base", "--is-ancestor", ancestor, id),
                            "git agrees that " + ancestor + " is in the history of " + shown);
                }
            }
        }
        assertTrue(read > 20 && read < ids.size(), "the mutations leave some commits canonical: " + read);
        assertTrue(yes > 20, "and some positive answers to check: " + yes);
    }

    private static void mutate(List<String> l, java.util.Random random, String tree, String p, String q) {
        int at = random.nextInt(l.size());
        switch (random.nextInt(10)) {
            case 0 -> l.add(random.nextInt(l.size() + 1), l.get(at)); // a line twice
            case 1 -> l.add(random.nextInt(4), "tree " + tree);
            case 2 -> l.add(random.nextInt(l.size() + 1), "parent " + (random.nextBoolean() ? p : q));
            case 3 -> l.remove(at);
            case 4 -> java.util.Collections.swap(l, at, random.nextInt(l.size()));
            case 5 -> l.set(at, l.get(at).replaceFirst(" ", "  "));
            case 6 -> l.set(at, l.get(at).toUpperCase(java.util.Locale.ROOT));
            case 7 -> l.set(at, l.get(at) + (random.nextBoolean() ? "0" : " "));
            case 8 -> l.set(
                    at,
                    l.get(at).isEmpty() ? "" : l.get(at).substring(0, l.get(at).length() - 1));
            default -> {
                // Harmless: a header git ignores, or a change to the message.
                l.add(Math.min(l.size(), 4 + random.nextInt(2)), "encoding UTF-8");
            }
        }
        if (l.isEmpty()) {
            l.add("");
        }
    }
}
