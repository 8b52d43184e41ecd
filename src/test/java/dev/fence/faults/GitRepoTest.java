package dev.fence.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.git.Git;
import org.junit.jupiter.api.Test;

/** What {@code git push --porcelain} and the hook said, read into a push's outcome. */
class GitRepoTest {
    private static final String REF = "refs/heads/main";

    @Test
    void aFastForwardIsAcceptedWithItsOldId() {
        GitRepo.PushResult r = GitRepo.parse(
                new Git.Result(0, "To /tmp/faults.git\n \tabc123:refs/heads/main\t1111111..2222222\nDone\n", ""), REF);
        assertTrue(r.accepted());
        assertFalse(r.forced());
        assertEquals("1111111", r.oldId());
        assertNull(r.reason());
    }

    @Test
    void aForcedUpdateIsAcceptedAndForced() {
        GitRepo.PushResult r = GitRepo.parse(
                new Git.Result(0, "To x\n+\tabc:refs/heads/main\t1111111...3333333 (forced update)\nDone\n", ""), REF);
        assertTrue(r.accepted());
        assertTrue(r.forced());
        assertEquals("1111111", r.oldId());
    }

    @Test
    void aRefusalCarriesTheHooksFencedLine() {
        String err = "remote: \nremote: FENCED resource=git:faults:refs/heads/main ref=refs/heads/main token=3"
                + " current=4 reason=superseded\nremote: Your lease is gone.\n";
        GitRepo.PushResult r = GitRepo.parse(
                new Git.Result(
                        1, "To x\n!\tabc:refs/heads/main\t[remote rejected] (pre-receive hook declined)\nDone\n", err),
                REF);
        assertFalse(r.accepted());
        assertTrue(r.reason().startsWith("FENCED ") && r.reason().endsWith("reason=superseded"), r.reason());
        assertEquals("superseded", Faults.reasonKey(r.reason()));
    }

    @Test
    void aRefusalByGitItselfCarriesGitsSummary() {
        GitRepo.PushResult r = GitRepo.parse(
                new Git.Result(1, "To x\n!\tabc:refs/heads/main\t[rejected] (fetch first)\nDone\n", ""), REF);
        assertFalse(r.accepted());
        assertEquals("[rejected] (fetch first)", r.reason());
    }
}
