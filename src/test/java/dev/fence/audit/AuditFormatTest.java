package dev.fence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.LedgerEvent;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ledger as text: a row per event, whatever names and details the events carry. */
class AuditFormatTest {
    private static final Instant AT = Instant.parse("2026-12-07T01:10:54Z");

    /** A write's detail quotes a path or a file name chosen by its writer (fence write --path, a migration). */
    private static LedgerEvent write(String holder, String detail) {
        return new LedgerEvent(
                0, AT, EventType.ACCEPT, "shared/notes", null, null, holder, holder, 1, null, null, null, detail);
    }

    @Test
    void aDetailOrNameCannotForgeARow() {
        String forged = "write notes\n01:11:00  RELEASE shared/notes: released by agent-a (token 1)\u001b[8m";
        List<LedgerEvent> events = List.of(write("agent-a", forged), write("agent-b (token 9) x", "ok"));
        StringWriter timeline = new StringWriter();
        AuditFormat.timeline(events, new PrintWriter(timeline, true));
        StringWriter table = new StringWriter();
        AuditFormat.table(events, new PrintWriter(table, true));

        List<String> rows = timeline.toString().lines().toList();
        assertEquals(2, rows.size(), timeline.toString());
        assertFalse(timeline.toString().contains("\u001b"), timeline.toString());
        assertTrue(rows.get(0).contains("write notes\\x0A01:11:00"), rows.get(0));
        assertTrue(rows.get(1).contains("by \"agent-b (token 9) x\""), rows.get(1));
        assertEquals(3, table.toString().lines().count(), table.toString());
        assertTrue(table.toString().contains("\"agent-b (token 9) x\""), table.toString());
    }

    @Test
    void aLeaseRenewedAfterItsLapseReadsAsHeldAgain() {
        String res = "git:app:refs/heads/main";
        List<LedgerEvent> events = List.of(
                LedgerEvent.lease(AT, EventType.GRANT, res, "agent-a", 7),
                LedgerEvent.lease(AT.plusSeconds(60), EventType.EXPIRE, res, "agent-a", 7),
                LedgerEvent.lease(AT.plusSeconds(90), EventType.RENEW, res, "agent-a", 7));
        StringWriter timeline = new StringWriter();
        AuditFormat.timeline(events, new PrintWriter(timeline, true));

        List<String> rows = timeline.toString().lines().toList();
        assertEquals(
                "01:12:24  RENEW   refs/heads/main: lease of agent-a (token 7) renewed after its lapse, held again",
                rows.get(2));
        assertEquals(EventType.RENEW, EventType.parse("renew"));
    }
}
