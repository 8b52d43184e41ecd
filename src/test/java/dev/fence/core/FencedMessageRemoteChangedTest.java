package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** remote-changed says what happened: the branch moved, and the lease was lost only when it was. */
class FencedMessageRemoteChangedTest {
    private static Fenced moved(long token, long current) {
        return new Fenced(
                "git:app:refs/heads/main",
                "refs/heads/main",
                token,
                current,
                Reason.REMOTE_CHANGED,
                null,
                null,
                "the remote's refs/heads/main is at 1234567890ab, but your lease recorded ba0987654321");
    }

    @Test
    void underALiveLeaseTheMessageSaysTheBranchMovedNotThatTheLeaseIsLost() {
        List<String> lines = FencedMessage.lines(moved(41, 41));
        String text = String.join("\n", lines);
        assertEquals(
                "FENCED resource=git:app:refs/heads/main ref=refs/heads/main token=41 current=41 reason=remote-changed",
                lines.get(0));
        assertFalse(text.contains("no longer own"), text);
        assertFalse(text.contains("\"hold\""), text);
        assertTrue(text.contains("(token 41) is still the current one, but the remote branch moved"), text);
        assertTrue(text.contains("acquire a new lease: it records the branch as it is now"), text);
        assertTrue(text.contains("show its grant: the same --grant-file"), text);
        assertTrue(text.contains("This is NOT a transient error."), text);
    }

    @Test
    void underALeaseSupersededSinceItSaysThatToo() {
        String text = String.join("\n", FencedMessage.lines(moved(41, 42)));
        assertTrue(text.contains("You no longer own refs/heads/main: a newer token (42) was granted"), text);
        assertTrue(text.contains("says you \"hold\" on this resource is stale"), text);
    }
}
