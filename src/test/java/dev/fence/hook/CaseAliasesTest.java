package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.FencePolicy;
import dev.fence.core.ObjectIds;
import dev.fence.core.PusherPolicy;
import dev.fence.core.RefUpdate;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rule for spellings of one ref on a repository that ignores case, on facts as a hook measures them
 * and as {@code fence serve} receives them; the process tests are {@link RefCaseAliasTest}.
 */
class CaseAliasesTest {
    private static final String A = "1".repeat(40);

    @TempDir
    Path tmp;

    private static FencePolicy fencing(String... patterns) {
        return new FencePolicy(List.of(patterns), List.of(), PusherPolicy.BUMP, List.of(), true, Duration.ofSeconds(2));
    }

    private static List<RefUpdate> push(String... refs) {
        List<RefUpdate> out = new ArrayList<>();
        for (String r : refs) {
            out.add(new RefUpdate(ObjectIds.ZERO, A, r));
        }
        return out;
    }

    @Test
    void aRepositoryThatRespectsCaseRefusesNothing() {
        CaseAliases none = CaseAliases.parse(null, List.of());
        assertFalse(none.ignoresCase());
        assertEquals(
                List.of(), none.refusals(push("refs/heads/MAIN", "refs/heads/main"), fencing("refs/heads/main"), ""));
        assertFalse(CaseAliases.parse("false", List.of()).ignoresCase());
        // Spellings sent for a repository that respects case are refs of their own.
        CaseAliases respected = CaseAliases.parse(null, List.of("refs/heads/MAIN refs/heads/main"));
        assertFalse(respected.ignoresCase());
        assertEquals(List.of(), respected.refusals(push("refs/heads/MAIN"), fencing("refs/heads/**"), ""));
    }

    @Test
    void aSpellingOutsideThePatternsWhoseFoldIsFencedIsRefused() {
        CaseAliases ci = CaseAliases.parse(CaseAliases.FULL, List.of());
        List<String> lines = ci.refusals(push("refs/heads/MAIN", "refs/heads/topic"), fencing("refs/heads/main"), "");
        assertEquals("REJECTED ref=refs/heads/MAIN reason=ref-case-alias", lines.get(0));
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(1).contains("refs/heads/main"), lines.get(1));
        // A namespace's stored name in another case writes that namespace's branch all the same.
        assertEquals(
                "REJECTED ref=refs/NAMESPACES/t1/refs/heads/main reason=ref-case-alias",
                ci.refusals(push("refs/NAMESPACES/t1/refs/heads/main"), fencing("refs/heads/**"), "")
                        .get(0));
    }

    @Test
    void aFencedSpellingIsRefusedWhereTheRepositoryHasAnotherFencedOne() {
        FencePolicy all = fencing("refs/heads/**");
        CaseAliases sent = CaseAliases.parse(CaseAliases.FULL, List.of("refs/heads/MAIN refs/heads/main"));
        assertEquals(
                "REJECTED ref=refs/heads/MAIN reason=ref-case-alias",
                sent.refusals(push("refs/heads/MAIN"), all, "").get(0));
        // A directory spelled otherwise: the new branch would be listed (and pushed again) under its spelling.
        CaseAliases dir = CaseAliases.parse(CaseAliases.FULL, List.of("refs/heads/feature/y refs/heads/Feature"));
        List<String> lines = dir.refusals(push("refs/heads/feature/y"), all, "");
        assertTrue(lines.get(1).contains("refs/heads/Feature/y"), lines.toString());
        // Only fenced spellings count: a directory an unfenced ref named first closes no fenced branch.
        FencePolicy release = fencing("refs/heads/release/*");
        CaseAliases unfenced =
                CaseAliases.parse(CaseAliases.FULL, List.of("refs/heads/release/1.0 refs/heads/Release"));
        assertEquals(List.of(), unfenced.refusals(push("refs/heads/release/1.0"), release, ""));
        // A fact about a name that is no spelling of the pushed ref says nothing.
        CaseAliases unrelated = CaseAliases.parse(CaseAliases.FULL, List.of("refs/heads/MAIN refs/heads/other"));
        assertEquals(List.of(), unrelated.refusals(push("refs/heads/MAIN"), all, ""));
    }

    @Test
    void twoSpellingsInOnePushAreBothRefused() {
        List<String> lines = CaseAliases.parse(CaseAliases.FULL, List.of())
                .refusals(push("refs/heads/topic", "refs/heads/TOPIC"), fencing("refs/heads/**"), "");
        assertEquals(4, lines.size(), lines.toString());
        assertTrue(lines.get(1).contains("both in this push"), lines.get(1));
    }

    @Test
    void aClientThatComparesAsciiOnlyGetsOneSpellingOfOtherCharacters() {
        CaseAliases ascii = CaseAliases.parse(CaseAliases.ASCII, List.of());
        FencePolicy all = fencing("refs/heads/**");
        assertEquals(List.of(), ascii.refusals(push("refs/heads/Feature-X", "refs/heads/caf\u00e9"), all, ""));
        List<String> lines = ascii.refusals(push("refs/heads/cafe\u0301"), all, "");
        assertEquals("REJECTED ref=refs/heads/cafe\u0301 reason=ref-case-alias", lines.get(0));
        assertTrue(lines.get(1).contains("refs/heads/caf\\u00e9"), lines.get(1));
        assertEquals(2, ascii.refusals(push("refs/heads/CAF\u00c9"), all, "").size());
    }

    /**
     * Windows strips the dot that ends a directory's name and HFS+ passes over some invisible code points:
     * such a spelling of a fenced ref is that ref, on facts a hook measured and on an ASCII-only client's.
     */
    @Test
    void spellingsThatWindowsOrHfsMakeOneFileAreRefused() throws IOException {
        FencePolicy main = fencing("refs/heads/main");
        CaseAliases full = CaseAliases.parse(CaseAliases.FULL, List.of());
        for (String alias : List.of("refs/heads./main", "refs/heads/ma\u200cin", "refs/HEADS./MA\ufeffIN")) {
            List<String> lines = full.refusals(push(alias), main, "");
            assertEquals(2, lines.size(), alias + ": " + lines);
            assertEquals("REJECTED ref=" + alias + " reason=ref-case-alias", lines.get(0));
        }

        Path git = tmp.resolve("dots.git");
        Files.createDirectories(git.resolve("refs/heads/Feature"));
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(git.resolve("config"), "[core]\n\tignorecase = true\n");
        Files.writeString(git.resolve("refs/heads/main"), A + "\n");
        Files.writeString(git.resolve("refs/heads/Feature/x"), A + "\n");
        Files.writeString(git.resolve("packed-refs"), A + " refs/heads/v1/notes\n");
        List<RefUpdate> pushed = push("refs/heads/ma\u200din", "refs/heads/feature./y", "refs/heads/v1./notes");
        CaseAliases measured = CaseAliases.measure(Map.of(), git, pushed);
        assertEquals(
                List.of(
                        "refs/heads/feature./y refs/heads/Feature",
                        "refs/heads/ma\u200din refs/heads/main",
                        "refs/heads/v1./notes refs/heads/v1/notes"),
                measured.facts().stream().sorted().toList());
        List<String> lines =
                CaseAliases.parse(measured.folding(), measured.facts()).refusals(pushed, fencing("refs/heads/**"), "");
        assertEquals(6, lines.size(), lines.toString());
        assertTrue(lines.get(3).contains("refs/heads/Feature/y"), lines.get(3));

        // A client that compares ASCII letters only cannot have looked for these: one spelling is taken.
        CaseAliases ascii = CaseAliases.parse(CaseAliases.ASCII, List.of());
        FencePolicy all = fencing("refs/heads/**");
        List<String> dotted = ascii.refusals(push("refs/heads/a./b"), all, "");
        assertEquals("REJECTED ref=refs/heads/a./b reason=ref-case-alias", dotted.get(0));
        assertTrue(dotted.get(1).contains("Push to refs/heads/a/b instead"), dotted.get(1));
        assertEquals(2, ascii.refusals(push("refs/heads/topic\u200e"), all, "").size());
        assertEquals(List.of(), ascii.refusals(push("refs/heads/v1.0", "refs/heads/a/b"), all, ""));
    }

    @Test
    void malformedFactsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> CaseAliases.parse("yes", List.of()));
        assertThrows(
                IllegalArgumentException.class, () -> CaseAliases.parse(CaseAliases.FULL, List.of("refs/heads/a")));
        assertThrows(
                IllegalArgumentException.class,
                () -> CaseAliases.parse(CaseAliases.FULL, List.of("refs/heads/a refs/heads/A extra")));
    }

    @Test
    void aliasesAreTheDeepestLeadingPartThatFoldsAlikeAndIsSpelledOtherwise() {
        Map<String, List<String>> found = CaseAliases.aliases(
                List.of("refs/heads/feature/y", "refs/heads/MAIN", "refs/heads/new"),
                List.of("refs/heads/Feature/x", "refs/heads/main", "refs/heads/other", "refs/tags/v1"));
        assertEquals(List.of("refs/heads/Feature"), found.get("refs/heads/feature/y"));
        assertEquals(List.of("refs/heads/main"), found.get("refs/heads/MAIN"));
        assertNull(found.get("refs/heads/new"));
        assertEquals("refs/heads/Feature/y", CaseAliases.respell("refs/heads/feature/y", "refs/heads/Feature"));
        assertNull(CaseAliases.respell("refs/heads/feature/y", "refs/heads/other"));
    }

    /**
     * A push of thousands of refs on a repository with thousands of loose and packed refs: each spelling
     * that differs is found once for each pushed ref it concerns, whichever listing holds it and however
     * many names share it.
     */
    @Test
    void manyPushedRefsAgainstManyLooseAndPackedRefsGetEachSpellingOnce() throws IOException {
        Path git = tmp.resolve("many.git");
        Files.createDirectories(git.resolve("refs/heads/Loose"));
        Files.writeString(git.resolve("config"), "[core]\n\tignorecase = true\n");
        Files.writeString(git.resolve("refs/heads/Loose/x"), A + "\n");
        for (int i = 0; i < 3000; i++) {
            Files.writeString(git.resolve("refs/heads/l" + i), A + "\n");
        }
        StringBuilder packed = new StringBuilder("# pack-refs with: peeled fully-peeled sorted \n");
        for (int i = 0; i < 5000; i++) {
            packed.append(A).append(" refs/heads/p").append(i).append('\n');
        }
        packed.append(A).append(" refs/Heads/old\n").append(A).append(" refs/Heads/older\n");
        packed.append(A).append(" refs/heads/Main\n").append(A).append(" refs/tags/v1\n");
        Files.writeString(git.resolve("packed-refs"), packed.toString());

        List<String> refs = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            refs.add("refs/heads/n" + i);
        }
        refs.addAll(List.of("refs/heads/main", "refs/heads/loose/y", "refs/heads/P7", "refs/heads/L9"));
        CaseAliases measured = CaseAliases.measure(Map.of(), git, push(refs.toArray(String[]::new)));

        List<String> expected = new ArrayList<>();
        for (String r : refs) {
            expected.add(r + " refs/Heads"); // two packed names share the directory: one fact
        }
        expected.addAll(List.of(
                "refs/heads/main refs/heads/Main",
                "refs/heads/loose/y refs/heads/Loose",
                "refs/heads/P7 refs/heads/p7",
                "refs/heads/L9 refs/heads/l9"));
        assertEquals(
                expected.stream().sorted().toList(),
                measured.facts().stream().sorted().toList());
        // Only fenced spellings count: refs/Heads is outside refs/heads/**, so it closes nothing.
        List<String> lines = measured.refusals(push(refs.toArray(String[]::new)), fencing("refs/heads/**"), "");
        assertEquals(8, lines.size(), lines.toString());
    }

    /**
     * A namespace is stored as directories: where the repository has {@code refs/namespaces/t1/},
     * {@code GIT_NAMESPACE=T1} writes t1's refs. A hook finds the namespace's other spelling (or its first
     * components') among the loose refs and in packed-refs; the fenced refs of such a push are refused
     * with that spelling named, as measured and as received, and a caller that sends no namespace fact (an
     * older shim) is judged as before.
     */
    @Test
    void anotherSpellingOfThePushedNamespaceIsFoundAndItsFencedRefsRefused() throws IOException {
        Path git = tmp.resolve("ns.git");
        Files.createDirectories(git.resolve("refs/namespaces/t1/refs/heads"));
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(git.resolve("config"), "[core]\n\tignorecase = true\n");
        Files.writeString(git.resolve("refs/namespaces/t1/refs/heads/main"), A + "\n");
        Files.writeString(
                git.resolve("packed-refs"),
                "# pack-refs with: peeled fully-peeled sorted \n" + A
                        + " refs/namespaces/Packed/refs/namespaces/in/refs/heads/main\n" + A + " refs/tags/v1\n");
        List<RefUpdate> pushed = push("refs/heads/main", "refs/heads/MAIN", "refs/notes/free");
        FencePolicy heads = fencing("refs/heads/**");

        CaseAliases loose = CaseAliases.measure(Map.of("GIT_NAMESPACE", "T1"), git, pushed);
        assertEquals(List.of("t1"), loose.namespaceFacts());
        List<String> lines = loose.refusals(pushed, heads, "", "T1");
        assertEquals(4, lines.size(), lines.toString());
        assertEquals("REJECTED ref=refs/heads/main reason=ref-case-alias", lines.get(0));
        assertTrue(lines.get(1).startsWith("fence: GIT_NAMESPACE=T1 and t1 are one namespace: "), lines.get(1));
        assertTrue(lines.get(1).endsWith(" Push with GIT_NAMESPACE=t1 instead, with its lease."), lines.get(1));
        assertEquals("REJECTED ref=refs/heads/MAIN reason=ref-case-alias", lines.get(2));
        // As received by fence serve: the same lines; without the namespace fact, nothing about it.
        CaseAliases received = CaseAliases.parse(loose.folding(), loose.facts(), loose.namespaceFacts());
        assertEquals(lines, received.refusals(pushed, heads, "", "T1"));
        assertEquals(
                List.of(),
                CaseAliases.parse(loose.folding(), loose.facts()).refusals(push("refs/heads/main"), heads, "", "T1"));
        assertEquals(
                List.of(),
                CaseAliases.parse(null, List.of(), List.of("t1")).refusals(push("refs/heads/main"), heads, "", "T1"),
                "where case counts, T1 is a namespace of its own");

        // Nested, packed, and only the first component spelled otherwise: the spelling keeps the rest.
        CaseAliases nested = CaseAliases.measure(Map.of("GIT_NAMESPACE", "packed/in/deeper"), git, pushed);
        assertEquals(List.of("Packed/in"), nested.namespaceFacts());
        assertTrue(nested.refusals(pushed, heads, "", "packed/in/deeper")
                .get(1)
                .contains("GIT_NAMESPACE=Packed/in/deeper instead"));
        CaseAliases outer = CaseAliases.measure(Map.of("GIT_NAMESPACE", "T1/inner"), git, pushed);
        assertEquals(List.of("t1"), outer.namespaceFacts());
        assertTrue(outer.refusals(pushed, heads, "", "T1/inner").get(1).contains("and t1/inner are one namespace"));

        // Several spellings (Linux keeps them all): the deepest is named, in whatever order they were found.
        List<String> both = List.of("t1", "t1/In");
        for (List<String> facts : List.of(both, List.of("t1/In", "t1"))) {
            assertTrue(
                    CaseAliases.parse(CaseAliases.ASCII, List.of(), facts)
                            .refusals(push("refs/heads/main"), heads, "", "T1/in")
                            .get(1)
                            .contains("Push with GIT_NAMESPACE=t1/In instead"),
                    facts.toString());
        }

        // The namespace as the repository spells it, a new one, or a ref outside the patterns: nothing.
        for (String ns : List.of("t1", "t2", "Packed/in")) {
            CaseAliases same = CaseAliases.measure(Map.of("GIT_NAMESPACE", ns), git, pushed);
            assertEquals(List.of(), same.namespaceFacts(), ns);
        }
        assertEquals(List.of(), loose.refusals(push("refs/notes/free"), heads, "", "T1"));
        // Where case counts, T1 is a namespace of its own.
        Files.writeString(git.resolve("config"), "[core]\n\tignorecase = false\n");
        assertEquals(
                List.of(),
                CaseAliases.measure(Map.of("GIT_NAMESPACE", "T1"), git, pushed).namespaceFacts());
    }

    @Test
    void malformedNamespaceFactsAreRefused() {
        for (String bad : List.of("", "t1 t2", "/t1", "t1/", "t1//t2")) {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> CaseAliases.parse(CaseAliases.FULL, List.of(), List.of(bad)),
                    bad);
        }
    }

    /** What a hook measures: the config, the loose refs' directories and packed-refs. */
    @Test
    void aHookMeasuresTheConfigTheLooseRefsAndPackedRefs() throws IOException {
        Path git = tmp.resolve("app.git");
        Files.createDirectories(git.resolve("refs/heads/Feature"));
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(git.resolve("refs/heads/Feature/x"), A + "\n");
        Files.writeString(
                git.resolve("packed-refs"),
                "# pack-refs with: peeled fully-peeled sorted \n" + A + " refs/heads/main\n" + A + " refs/tags/v1\n^"
                        + A + "\n");
        Files.writeString(git.resolve("config"), "[core]\n\tbare = true\n");
        List<RefUpdate> pushed = push("refs/heads/MAIN", "refs/heads/feature/y", "refs/heads/new");
        assertFalse(CaseAliases.measure(Map.of(), git, pushed).ignoresCase(), "respects case unless told");

        Files.writeString(git.resolve("config"), "[core]\n\tbare = true\n\tignoreCase = true\n");
        CaseAliases measured = CaseAliases.measure(Map.of(), git, pushed);
        assertTrue(measured.ignoresCase());
        assertEquals(CaseAliases.FULL, measured.folding());
        assertEquals(
                List.of("refs/heads/MAIN refs/heads/main", "refs/heads/feature/y refs/heads/Feature"),
                measured.facts().stream().sorted().toList());
        // As sent, as received: the same refusals.
        CaseAliases received = CaseAliases.parse(measured.folding(), measured.facts());
        FencePolicy all = fencing("refs/heads/**");
        assertEquals(measured.refusals(pushed, all, ""), received.refusals(pushed, all, ""));
        assertEquals(4, received.refusals(pushed, all, "").size());

        // A file system on which "head" is HEAD ignores case whatever the config says.
        Files.writeString(git.resolve("config"), "[core]\n\tignorecase = false\n");
        assertFalse(CaseAliases.ignoresCase(git));
        Files.writeString(git.resolve("head"), "ref: refs/heads/main\n");
        assertTrue(CaseAliases.ignoresCase(git));
    }
}
