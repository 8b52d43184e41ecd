package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.HookedRepo;
import dev.fence.testing.ProcessTest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A repository whose file system ignores case (macOS, Windows: git writes {@code core.ignorecase = true}
 * into its config) stores {@code refs/heads/MAIN}, {@code refs/HEADS/main} and {@code refs/heads/main} as
 * one file, and on APFS the NFC and NFD spellings of {@code café} as one too. A push by another spelling
 * of a fenced branch must not be judged as some other ref (or as no fenced ref at all) and move that
 * branch. The file systems here respect case, so setting the config is what makes the repository one that
 * ignores it; git itself then still keeps the spellings apart, which lets the tests see what the hook let
 * through.
 *
 * <p>Real git, fence's installed hooks, pushes as a network pusher makes them.
 */
@ProcessTest
class RefCaseAliasTest {
    @TempDir
    Path tmp;

    private HookedRepo repo(boolean ignoreCase, String... conf) {
        HookedRepo repo = HookedRepo.create(tmp, "app", "sqlite:" + tmp.resolve("fence.db"));
        repo.configure(conf);
        HookedRepo.git(HookedRepo.gitEnv(tmp), repo.bare(), "config", "core.ignorecase", Boolean.toString(ignoreCase))
                .check();
        HookedRepo.Clone seed = repo.clone("carol");
        seed.commit("seed");
        seed.push(List.of(), "HEAD:refs/heads/main").check();
        return repo;
    }

    private List<LedgerEvent> events(String resource) {
        try (LeaseStore s = Stores.open("sqlite:" + tmp.resolve("fence.db"), StoreOptions.defaults())) {
            return s.query(new LedgerQuery(resource, null, null, null, null, null, 0));
        }
    }

    /**
     * The attack's own push: a branch spelled MAIN where main exists, both fenced by refs/heads/** (the
     * default). Judged as a fresh resource it was accepted; on a case-insensitive host it wrote main.
     */
    @Test
    void aBranchSpelledLikeAnExistingFencedBranchInAnotherCaseIsRefused() {
        HookedRepo repo = repo(true);
        String main = repo.tip("refs/heads/main");
        HookedRepo.Clone x = repo.clone("agent-x");
        x.commit("rewrite main through another spelling");
        HookedRepo.Run r = x.push(List.of(), "HEAD:refs/heads/MAIN");

        assertFalse(r.ok(), r.err());
        assertNull(repo.tip("refs/heads/MAIN"), r.err());
        assertEquals(main, repo.tip("refs/heads/main"));
        assertTrue(r.remoteLines().contains("REJECTED ref=refs/heads/MAIN reason=ref-case-alias"), r.err());
        assertTrue(r.err().contains("refs/heads/main"), "names the spelling fence guards: " + r.err());
        assertEquals(List.of(), events("git:app:refs/heads/MAIN"), "nothing recorded for the alias");
    }

    /** A spelling no fenced pattern matches as spelled, though its folded spelling does: refused, not untouched. */
    @Test
    void aRefOutsideTheFencedPatternsOnlyByItsCaseIsRefused() {
        HookedRepo repo = repo(true, "fenced-refs = refs/heads/main");
        String main = repo.tip("refs/heads/main");
        HookedRepo.Clone x = repo.clone("agent-x");
        x.commit("rewrite main through unfenced spellings");
        for (String alias : List.of("refs/heads/MAIN", "refs/HEADS/main", "refs/Heads/Main")) {
            HookedRepo.Run r = x.push(List.of(), "HEAD:" + alias);
            assertFalse(r.ok(), alias + ": " + r.err());
            assertNull(repo.tip(alias), alias);
            assertTrue(r.remoteLines().contains("REJECTED ref=" + alias + " reason=ref-case-alias"), r.err());
            assertTrue(r.err().contains("refs/heads/main"), r.err());
        }
        assertEquals(main, repo.tip("refs/heads/main"));
        // A ref that is no spelling of a fenced one still passes untouched.
        x.push(List.of(), "HEAD:refs/heads/topic").check();
    }

    /**
     * NFC and NFD spellings of one name are one file on APFS: the second spelling is refused. (The hook runs
     * in a UTF-8 locale here, as a macOS JVM names files in UTF-8 whatever the locale.)
     */
    @Test
    void anotherUnicodeNormalisationOfAFencedBranchIsRefused() {
        HookedRepo repo = repo(true);
        String nfc = "refs/heads/caf\u00e9";
        String nfd = "refs/heads/cafe\u0301";
        HookedRepo.Clone a = repo.clone("carol").env("LC_ALL", "C.UTF-8");
        a.commit("café");
        a.push(List.of(), "HEAD:" + nfc).check();
        a.commit("café again, decomposed");
        HookedRepo.Run r = a.push(List.of(), "HEAD:" + nfd);
        assertFalse(r.ok(), r.err());
        assertNull(repo.tip(nfd));
        assertTrue(r.err().contains("reason=ref-case-alias"), r.err());
    }

    /**
     * Windows strips the dot that ends a directory's name ({@code refs/heads./main} is {@code
     * refs/heads/main} there) and HFS+ passes over some invisible code points ({@code ma}, U+200C, {@code
     * in} is {@code main}): spellings git accepts as ref names that write the fenced branch's file.
     */
    @Test
    void spellingsThatWindowsOrHfsWriteAsTheFencedBranchAreRefused() {
        HookedRepo repo = repo(true, "fenced-refs = refs/heads/main");
        String main = repo.tip("refs/heads/main");
        HookedRepo.Clone x = repo.clone("agent-x").env("LC_ALL", "C.UTF-8");
        x.commit("rewrite main through a spelling the file system makes main");
        for (String alias : List.of("refs/heads./main", "refs/heads/ma\u200cin", "refs/HEADS./Ma\ufeffin")) {
            HookedRepo.Run r = x.push(List.of(), "HEAD:" + alias);
            assertFalse(r.ok(), alias + ": " + r.err());
            assertNull(repo.tip(alias), alias);
            assertTrue(r.remoteLines().contains("REJECTED ref=" + alias + " reason=ref-case-alias"), r.err());
            assertTrue(r.err().contains("refs/heads/main"), r.err());
        }
        assertEquals(main, repo.tip("refs/heads/main"));
        // A ref with a dot inside a component, or an invisible character HFS+ keeps, is a name of its own.
        x.push(List.of(), "HEAD:refs/heads/ma\u200bin", "HEAD:refs/heads/v1.0").check();
    }

    /** The same spellings of fenced refs that exist, where every ref is fenced as spelled. */
    @Test
    void spellingsThatWindowsOrHfsWriteAsAnExistingFencedRefAreRefused() {
        HookedRepo repo = repo(true);
        HookedRepo.Clone a = repo.clone("carol").env("LC_ALL", "C.UTF-8");
        a.commit("feature x");
        a.push(List.of(), "HEAD:refs/heads/Feature/x").check();
        a.commit("through other spellings");
        HookedRepo.Run hfs = a.push(List.of(), "HEAD:refs/heads/ma\u200din");
        assertFalse(hfs.ok(), hfs.err());
        assertNull(repo.tip("refs/heads/ma\u200din"));
        assertTrue(hfs.remoteLines().contains("REJECTED ref=refs/heads/ma\u200din reason=ref-case-alias"), hfs.err());
        assertTrue(hfs.err().contains("Push to refs/heads/main instead"), hfs.err());
        HookedRepo.Run dot = a.push(List.of(), "HEAD:refs/heads/feature./y");
        assertFalse(dot.ok(), dot.err());
        assertNull(repo.tip("refs/heads/feature./y"));
        assertTrue(dot.remoteLines().contains("REJECTED ref=refs/heads/feature./y reason=ref-case-alias"), dot.err());
        assertTrue(dot.err().contains("refs/heads/Feature/y"), dot.err());
    }

    /**
     * Git updates a symbolic ref's target. A symbolic ref whose name is another spelling of a fenced branch,
     * or which leads to another spelling of one (another case, a dot Windows strips, a code point HFS+
     * passes over), writes that branch's file: a push to it must not pass.
     */
    @Test
    void aSymbolicRefNamedOrLeadingToAnotherSpellingOfAFencedBranchIsRefused() {
        HookedRepo repo = repo(true, "fenced-refs = refs/heads/main");
        String main = repo.tip("refs/heads/main");
        Map<String, String> env = HookedRepo.gitEnv(tmp);
        HookedRepo.git(env, repo.bare(), "symbolic-ref", "refs/heads/MAIN", "refs/notes/elsewhere")
                .check();
        Map<String, String> links = new LinkedHashMap<>();
        links.put("refs/notes/upper", "refs/heads/Main");
        links.put("refs/notes/dot", "refs/heads./main");
        links.put("refs/notes/hfs", "refs/heads/ma\u200cin");
        links.put("refs/notes/chain", "refs/notes/dot");
        for (Map.Entry<String, String> l : links.entrySet()) {
            HookedRepo.git(env, repo.bare(), "symbolic-ref", l.getKey(), l.getValue())
                    .check();
        }
        HookedRepo.Clone x = repo.clone("agent-x").env("LC_ALL", "C.UTF-8");
        x.commit("rewrite main through a symbolic ref");
        List<String> pushed = new ArrayList<>(List.of("refs/heads/MAIN"));
        pushed.addAll(links.keySet());
        for (String ref : pushed) {
            HookedRepo.Run r = x.push(List.of(), "HEAD:" + ref);
            assertFalse(r.ok(), ref + ": " + r.err());
            assertTrue(r.remoteLines().contains("REJECTED ref=" + ref + " reason=symbolic-ref"), ref + ": " + r.err());
        }
        assertEquals(main, repo.tip("refs/heads/main"));
        for (String written : List.of("refs/notes/elsewhere", "refs/heads/Main", "refs/heads./main")) {
            assertNull(repo.tip(written), written);
        }
        assertNull(repo.tip("refs/heads/ma\u200cin"));
    }

    /**
     * A directory of fenced branches is one directory whatever its case: refs/heads/feature/y would be
     * written into refs/heads/Feature/ and listed as refs/heads/Feature/y, another resource than the one
     * judged. It is refused, and told the spelling the repository has.
     */
    @Test
    void aBranchInADirectoryOfFencedBranchesSpelledInAnotherCaseIsRefused() {
        HookedRepo repo = repo(true);
        HookedRepo.Clone a = repo.clone("carol");
        a.commit("feature x");
        a.push(List.of(), "HEAD:refs/heads/Feature/x").check();
        HookedRepo.Run r = a.push(List.of(), "HEAD:refs/heads/feature/y");
        assertFalse(r.ok(), r.err());
        assertNull(repo.tip("refs/heads/feature/y"));
        assertTrue(r.remoteLines().contains("REJECTED ref=refs/heads/feature/y reason=ref-case-alias"), r.err());
        assertTrue(r.err().contains("refs/heads/Feature/y"), r.err());
        // Spelled as the repository has it, the branch is an ordinary new one.
        a.push(List.of(), "HEAD:refs/heads/Feature/y").check();
    }

    /** Two spellings of one new branch in one push are one file: the push is refused. */
    @Test
    void twoSpellingsOfOneNewBranchInOnePushAreRefused() {
        HookedRepo repo = repo(true);
        HookedRepo.Clone a = repo.clone("carol");
        a.commit("topic");
        HookedRepo.Run r = a.push(List.of(), "HEAD:refs/heads/topic", "HEAD:refs/heads/TOPIC");
        assertFalse(r.ok(), r.err());
        assertNull(repo.tip("refs/heads/topic"));
        assertNull(repo.tip("refs/heads/TOPIC"));
        assertTrue(r.err().contains("reason=ref-case-alias"), r.err());
    }

    /** A broken configuration closes fenced refs, and so another spelling of one where case is ignored. */
    @Test
    void aBrokenConfigurationClosesOtherSpellingsOfFencedRefsToo() {
        HookedRepo repo = repo(true);
        repo.configure("no-such-setting = 1");
        HookedRepo.Clone x = repo.clone("agent-x");
        x.commit("while the configuration is broken");
        HookedRepo.Run r = x.push(List.of(), "HEAD:refs/HEADS/main");
        assertFalse(r.ok(), r.err());
        assertNull(repo.tip("refs/HEADS/main"));
        assertTrue(r.err().contains("reason=bad-config"), r.err());
        x.push(List.of(), "HEAD:refs/tags/v1").check();
    }

    /** Where the repository respects case (Linux's default), MAIN is a branch of its own, as before. */
    @Test
    void whereTheRepositoryRespectsCaseAnotherSpellingIsAnotherBranch() {
        HookedRepo repo = repo(false);
        String main = repo.tip("refs/heads/main");
        HookedRepo.Clone x = repo.clone("agent-x");
        String mine = x.commit("a branch of its own");
        x.push(List.of(), "HEAD:refs/heads/MAIN").check();
        assertEquals(mine, repo.tip("refs/heads/MAIN"));
        assertEquals(main, repo.tip("refs/heads/main"));
        assertFalse(events("git:app:refs/heads/MAIN").isEmpty(), "judged and recorded as its own branch");
        x.push(List.of(), "HEAD:refs/HEADS/main").check();
        assertEquals(mine, repo.tip("refs/HEADS/main"));
    }

    /** With no core.ignorecase at all (git's default), the same. */
    @Test
    void withoutTheSettingAnotherSpellingIsAnotherBranch() {
        HookedRepo repo = HookedRepo.create(tmp, "app", "sqlite:" + tmp.resolve("fence.db"));
        HookedRepo.git(HookedRepo.gitEnv(tmp), repo.bare(), "config", "--unset", "core.ignorecase");
        HookedRepo.Clone x = repo.clone("carol");
        x.commit("seed");
        x.push(List.of(), "HEAD:refs/heads/main").check();
        x.push(List.of(), "HEAD:refs/heads/MAIN").check();
        assertEquals(repo.tip("refs/heads/main"), repo.tip("refs/heads/MAIN"));
    }
}
