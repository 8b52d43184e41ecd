package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How a remote's messages are read back: prefixes stripped, the FENCED block found. */
class FencedPushTest {
    @Test
    void remoteLinesLoseTransportAndGitLabPrefixes() {
        String messages =
                "remote: GL-HOOK-ERR: FENCED resource=r ref=refs/heads/main token=1 current=2 reason=superseded\r\n"
                        + "remote: GL-HOOK-ERR: You no longer own refs/heads/main.\n"
                        + "remote: \n"
                        + "plain line   \n";
        assertEquals(
                List.of(
                        "FENCED resource=r ref=refs/heads/main token=1 current=2 reason=superseded",
                        "You no longer own refs/heads/main.",
                        "plain line"),
                FencedPush.remoteLines(messages));
        assertEquals(List.of(), FencedPush.remoteLines(null));
    }

    @Test
    void theFencedBlockStartsAtTheFirstFencedLine() {
        List<String> lines = List.of("warning: something else", "FENCED resource=r reason=stale-token", "prose");
        assertEquals(List.of("FENCED resource=r reason=stale-token", "prose"), FencedPush.fencedLines(lines));
        assertEquals(List.of(), FencedPush.fencedLines(List.of("REJECTED ref=- reason=store-down", "down")));
    }
}
