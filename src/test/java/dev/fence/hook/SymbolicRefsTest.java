package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.FencePolicy;
import dev.fence.core.RefUpdate;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Symbolic refs read as git's files backend reads them: chains, loops, bad targets, namespaces. */
class SymbolicRefsTest {
    @TempDir
    Path git;

    private static final String A = "a".repeat(40);
    private static final String B = "b".repeat(40);

    private void ref(String name, String content) throws IOException {
        Path f = git.resolve(name);
        Files.createDirectories(f.getParent());
        Files.writeString(f, content);
    }

    private SymbolicRefs.Screened screen(Map<String, String> env, FencePolicy policy, RefUpdate... updates) {
        return SymbolicRefs.of(env, git, "git").screen(List.of(updates), policy);
    }

    /** The server's resolver, from the facts a hook measured, screens a push as the repository's files do. */
    @Test
    void factsSentByAHookScreenAPushAsTheRepositoryDoes() throws IOException {
        ref("refs/heads/main", A + "\n");
        ref("refs/tags/one", "ref: refs/tags/two\n");
        ref("refs/tags/two", "ref: refs/heads/main\n");
        ref("refs/tags/loop", "ref: refs/tags/loop\n");
        ref("refs/tags/escape", "ref: refs/../../config\n");
        ref("refs/tags/elsewhere", "ref: refs/tags/v1\n");
        List<RefUpdate> push = List.of(
                new RefUpdate(A, B, "refs/tags/one"),
                new RefUpdate(A, B, "refs/tags/loop"),
                new RefUpdate(A, B, "refs/tags/escape"),
                new RefUpdate(A, B, "refs/tags/elsewhere"),
                new RefUpdate(A, B, "refs/heads/main"));
        SymbolicRefs files = SymbolicRefs.of(Map.of(), git, "git");
        Map<String, List<String>> facts = SymrefFacts.measure(files, push);
        assertEquals(
                List.of("refs/tags/one refs/tags/two refs/heads/main", "refs/tags/elsewhere refs/tags/v1"),
                facts.get(SymrefFacts.CHAIN));
        SymbolicRefs sent = SymbolicRefs.resolvedBy(
                SymrefFacts.parse(facts.get(SymrefFacts.CHAIN), facts.get(SymrefFacts.PROBLEM)));
        FencePolicy policy = FencePolicy.defaults();
        var fromFiles = files.screen(push, policy);
        var fromFacts = sent.screen(push, policy);
        assertEquals(fromFiles.lines(""), fromFacts.lines(""));
        assertEquals(fromFiles.updates(), fromFacts.updates());
        // refs/tags/one is skipped as git skips it (pushed with its target and the same ids).
        assertEquals(2, fromFacts.refusals().size(), fromFacts.toString());
        assertEquals(4, fromFacts.updates().size(), fromFacts.toString());
    }

    @Test
    void chainsLoopsAndBadTargets() throws IOException {
        ref("refs/heads/main", A + "\n");
        ref("refs/tags/one", "ref: refs/tags/two\n");
        ref("refs/tags/two", "ref:\trefs/heads/main  \n");
        ref("refs/tags/loop", "ref: refs/tags/loop\n");
        ref("refs/tags/escape", "ref: refs/../../config\n");
        ref("refs/tags/elsewhere", "ref: refs/tags/v1\n");
        FencePolicy policy = FencePolicy.defaults();

        var chain = screen(Map.of(), policy, new RefUpdate(A, B, "refs/tags/one"));
        assertEquals(1, chain.refusals().size());
        assertEquals(
                List.of("refs/tags/one", "refs/tags/two", "refs/heads/main"),
                chain.refusals().get(0).chain());

        var loop = screen(Map.of(), policy, new RefUpdate(A, B, "refs/tags/loop"));
        assertTrue(loop.refusals().get(0).problem().contains("levels"), loop.toString());
        var escape = screen(Map.of(), policy, new RefUpdate(A, B, "refs/tags/escape"));
        assertTrue(escape.refusals().get(0).problem().contains("not a valid ref name"), escape.toString());

        var plain = screen(
                Map.of(), policy, new RefUpdate(A, B, "refs/tags/elsewhere"), new RefUpdate(A, B, "refs/heads/main"));
        assertTrue(plain.refusals().isEmpty(), "not a symbolic ref, or one leading nowhere fenced");
        assertEquals(2, plain.updates().size());
        assertEquals(
                1,
                screen(Map.of(), null, new RefUpdate(A, B, "refs/tags/elsewhere"))
                        .refusals()
                        .size(),
                "without the patterns every symbolic ref counts as fenced");
        assertTrue(
                screen(Map.of(), policy, new RefUpdate(A, B, "refs/heads/../../x"))
                        .refusals()
                        .isEmpty(),
                "a pushed name git would refuse anyway is not followed out of the repository");
    }

    @Test
    void anAliasPushedWithItsTargetAndTheSameIdsIsDroppedAsGitSkipsIt() throws IOException {
        ref("refs/heads/alias", "ref: refs/heads/main\n");
        var same = screen(
                Map.of(),
                FencePolicy.defaults(),
                new RefUpdate(A, B, "refs/heads/alias"),
                new RefUpdate(A, B, "refs/heads/main"));
        assertTrue(same.refusals().isEmpty());
        assertEquals(List.of(new RefUpdate(A, B, "refs/heads/main")), same.updates());
        var different = screen(
                Map.of(),
                FencePolicy.defaults(),
                new RefUpdate(A, B, "refs/heads/alias"),
                new RefUpdate(A, A, "refs/heads/main"));
        assertEquals(1, different.refusals().size());
    }

    @Test
    void aNamespacedPushResolvesInsideTheNamespace() throws IOException {
        ref("refs/namespaces/team/refs/heads/alias", "ref: refs/namespaces/team/refs/heads/main\n");
        var r = screen(
                Map.of("GIT_NAMESPACE", "team"), FencePolicy.defaults(), new RefUpdate(A, B, "refs/heads/alias"));
        assertEquals(
                List.of("refs/heads/alias", "refs/heads/main"),
                r.refusals().get(0).chain());
        assertTrue(screen(Map.of(), FencePolicy.defaults(), new RefUpdate(A, B, "refs/heads/alias"))
                .refusals()
                .isEmpty());
    }

    /** git's expand_namespace: a component per level, empty components skipped (GIT_NAMESPACE=org//team/). */
    @Test
    void aNestedNamespaceIsStoredAComponentPerLevel() throws IOException {
        String stored = "refs/namespaces/org/refs/namespaces/team/";
        ref(stored + "refs/heads/alias", "ref: " + stored + "refs/heads/main\n");
        var r = screen(
                Map.of("GIT_NAMESPACE", "org//team/"), FencePolicy.defaults(), new RefUpdate(A, B, "refs/heads/alias"));
        assertEquals(
                List.of("refs/heads/alias", "refs/heads/main"),
                r.refusals().get(0).chain());
        assertEquals("org/team", GitNamespace.of(Map.of("GIT_NAMESPACE", "org//team/")));
        assertEquals(stored, GitNamespace.prefix("org/team"));
        assertEquals("", GitNamespace.prefix(GitNamespace.of(Map.of("GIT_NAMESPACE", "/"))));
    }

    @Test
    void safeNames() {
        assertTrue(SymbolicRefs.isSafeRefName("refs/heads/main"));
        assertTrue(SymbolicRefs.isSafeRefName("HEAD"));
        for (String bad :
                List.of("", "refs/../x", "refs//x", "refs/x/", "refs/.x", "refs/x.lock", "refs/a b", "head", "/etc")) {
            assertFalse(SymbolicRefs.isSafeRefName(bad), bad);
        }
    }
}
