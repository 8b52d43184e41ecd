package dev.fence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.fence.core.EventType;
import dev.fence.core.LedgerEvent;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An unlanded bump must not hide a later bump of the same old..new that did land. A pusher gets such a
 * pair at will: an {@code --atomic} push whose other ref git refuses after pre-receive (a directory/file
 * conflict such as {@code refs/tags/df} and {@code refs/tags/df/x}) leaves an admitted bump unlanded, and
 * the same update pushed again lands. The JSON shows the landed bump superseding the lease; the page
 * must not draw the lease as still held.
 */
class TimelineUnlandedBumpTest {
    private static final String RES = "git:app:refs/heads/main";
    private static final String O = "1".repeat(40);
    private static final String X = "2".repeat(40);
    private static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");

    private static LedgerEvent ev(int s, EventType type, String holder, String pusher, long token, String reason) {
        boolean push = type != EventType.GRANT;
        return new LedgerEvent(
                s,
                T0.plusSeconds(s),
                type,
                RES,
                "app",
                "refs/heads/main",
                holder,
                pusher,
                token,
                push ? O : null,
                push ? X : null,
                reason,
                null);
    }

    @Test
    void aLandedBumpSupersedesTheLeaseEvenWhenAnEarlierIdenticalBumpDidNotLand() {
        List<LedgerEvent> events = List.of(
                ev(1, EventType.GRANT, "agent-b", null, 5, null),
                ev(2, EventType.BUMP, null, "agent-x", 6, "bumped"),
                ev(3, EventType.UNLANDED, null, "agent-x", 0, "bumped"),
                ev(4, EventType.BUMP, null, "agent-x", 6, "bumped"),
                ev(5, EventType.LANDED, null, "agent-x", 6, "bumped"));
        TimelineModel.Resource r =
                TimelineModel.build(events, T0, T0.plusSeconds(600)).get(0);
        assertEquals(1, r.bars().size(), r.bars().toString());
        TimelineModel.Bar bar = r.bars().get(0);
        assertEquals(TimelineModel.End.SUPERSEDED, bar.end(), bar.toString());
        assertEquals(T0.plusSeconds(4), bar.to(), "the lease ends at the bump that landed: " + bar);
    }

    /**
     * The landing of a bumped push carries the bump's token and no holder: it is drawn with the tokenless
     * pushes, not as an unproven token. The landing of an accepted push recorded without its holder (fence
     * serve's post-receive knows only the token) is drawn on the lane of the holder the token was granted
     * to.
     */
    @Test
    void landingsAreDrawnOnTheLaneOfThePushTheyLand() {
        List<LedgerEvent> events = List.of(
                ev(1, EventType.GRANT, "agent-b", null, 5, null),
                ev(2, EventType.ACCEPT, "agent-b", "agent-b", 5, "accepted"),
                ev(3, EventType.LANDED, null, "agent-b", 5, "accepted"),
                ev(4, EventType.BUMP, null, "carol", 6, "bumped"),
                ev(5, EventType.LANDED, null, "carol", 6, "bumped"));
        TimelineModel.Resource r =
                TimelineModel.build(events, T0, T0.plusSeconds(600)).get(0);
        assertEquals(
                List.of("agent-b", "agent-b", TimelineModel.TOKENLESS, TimelineModel.TOKENLESS),
                r.marks().stream().map(TimelineModel.Mark::lane).toList());
        assertEquals(List.of("agent-b", TimelineModel.TOKENLESS), r.lanes());
    }
}
