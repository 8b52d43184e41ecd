package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How git push's output is read back: per-ref porcelain status, the remote's lines, the FENCED block. */
class FencedPushTest {
    private static final String REF = "refs/heads/main";

    @Test
    void remoteLinesLoseTransportAndGitLabPrefixesAndSkipGitsOwnLines() {
        String stderr =
                "remote: GL-HOOK-ERR: FENCED resource=r ref=refs/heads/main token=1 current=2 reason=superseded\r\n"
                        + "remote: GL-HOOK-ERR: You no longer own refs/heads/main.\n"
                        + "remote: \n"
                        + "To ssh://host/app.git\n"
                        + "error: failed to push some refs to 'ssh://host/app.git'\n";
        assertEquals(
                List.of(
                        "FENCED resource=r ref=refs/heads/main token=1 current=2 reason=superseded",
                        "You no longer own refs/heads/main."),
                FencedPush.remoteLines(stderr));
        assertEquals(List.of(), FencedPush.remoteLines(null));
        assertEquals(
                List.of("To ssh://host/app.git", "error: failed to push some refs to 'ssh://host/app.git'"),
                GitPush.gitLines(stderr));
    }

    @Test
    void theFencedBlockStartsAtTheFirstFencedLine() {
        List<String> lines = List.of("warning: something else", "FENCED resource=r reason=stale-token", "prose");
        assertEquals(List.of("FENCED resource=r reason=stale-token", "prose"), FencedPush.fencedLines(lines));
        assertEquals(List.of(), FencedPush.fencedLines(List.of("REJECTED ref=- reason=store-down", "down")));
    }

    @Test
    void porcelainStatusOfEachKindOfOutcome() {
        String sha = "0123456789abcdef0123456789abcdef01234567";
        assertEquals("OK", status(" \t" + sha + ":" + REF + "\tabc1234..def5678"));
        assertEquals("OK", status("+\t" + sha + ":" + REF + "\tabc1234...def5678 (forced update)"));
        assertEquals("OK", status("*\t" + sha + ":" + REF + "\t[new branch]"));
        assertEquals("UP_TO_DATE", status("=\t" + sha + ":" + REF + "\t[up to date]"));
        assertEquals("REJECTED_REMOTE_CHANGED", status("!\t" + sha + ":" + REF + "\t[rejected] (stale info)"));
        assertEquals("REJECTED_NONFASTFORWARD", status("!\t" + sha + ":" + REF + "\t[rejected] (fetch first)"));
        GitPush.RefStatus hook = GitPush.refStatus(
                porcelain("!\t" + sha + ":" + REF + "\t[remote rejected] (pre-receive hook declined)"), REF);
        assertEquals("REJECTED_OTHER_REASON", hook.status());
        assertEquals("[remote rejected]", hook.summary());
        assertEquals("pre-receive hook declined", hook.reason());
        assertFalse(hook.landed());
        assertTrue(GitPush.refStatus(porcelain("=\t" + sha + ":" + REF + "\t[up to date]"), REF)
                .landed());
    }

    @Test
    void anotherRefsLineOrNoLineIsNotThisRefsStatus() {
        String sha = "0123456789abcdef0123456789abcdef01234567";
        assertNull(GitPush.refStatus(porcelain(" \t" + sha + ":refs/heads/main2\ta..b"), REF));
        assertNull(GitPush.refStatus("", REF));
    }

    @Test
    void withSeveralPushUrlsOneRejectionMeansNotLanded() {
        String sha = "0123456789abcdef0123456789abcdef01234567";
        String out = "To one\n \t" + sha + ":" + REF + "\ta..b\nDone\nTo two\n!\t" + sha + ":" + REF
                + "\t[rejected] (stale info)\nDone\n";
        assertEquals("REJECTED_REMOTE_CHANGED", GitPush.refStatus(out, REF).status());
    }

    private static String status(String line) {
        return GitPush.refStatus(porcelain(line), REF).status();
    }

    private static String porcelain(String line) {
        return "To /srv/git/app.git\n" + line + "\nDone\n";
    }
}
