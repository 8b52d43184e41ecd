package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ledger query's answer is bounded: asking a big ledger for everything is refused with how to narrow or
 * page it, instead of being read whole into the server's memory, where it could stop its verdicts.
 */
class AuditAnswerBoundTest {
    @TempDir
    static Path tmp;

    static TestServer t;
    static String auditor;
    static String agent;

    @BeforeAll
    static void start() {
        String url = "sqlite:" + tmp.resolve("big.db");
        t = TestServer.start(tmp.resolve("server"), url, "");
        auditor = t.add("reader", Role.AUDITOR);
        agent = t.add("agent-a", Role.AGENT, "agent-a");
        Instant at = Instant.now().minusSeconds(60);
        List<LedgerEvent> events = new ArrayList<>();
        for (int i = 0; i <= AuditApi.MAX_ANSWER_EVENTS; i++) {
            events.add(LedgerEvent.lease(at.plusMillis(i % 1000), EventType.GRANT, "db/big", "agent-a", i + 1));
        }
        for (int i = 0; i < 3; i++) {
            events.add(LedgerEvent.lease(at, EventType.GRANT, "db/small", "agent-a", i + 1));
        }
        try (LeaseStore store = Stores.open(url, StoreOptions.defaults())) {
            store.append(events);
        }
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    @Test
    void allOfABigLedgerIsRefusedWithHowToNarrowOrPageIt() {
        for (String path : List.of(
                "/v1/audit?limit=0",
                "/v1/audit?resource=db/big&limit=0",
                "/v1/audit/timeline?resource=db/big",
                "/v1/leases/grants?holder=agent-a&limit=0")) {
            var r = t.get(path, auditor, null);
            assertEquals(400, r.status(), path + ": " + r.body());
            assertTrue(r.body().contains("more than 100000 events match"), r.body());
            assertTrue(r.body().contains("until"), r.body());
        }
        var tooMany = t.get("/v1/audit?limit=100001", auditor, null);
        assertEquals(400, tooMany.status(), tooMany.body());
        assertTrue(tooMany.body().contains("limit is at most 100000"), tooMany.body());
        var agentAsks = t.get("/v1/leases/grants?holder=agent-a&resource=db/big&limit=0", agent, null);
        assertEquals(400, agentAsks.status(), agentAsks.body());
    }

    @Test
    void allOfWhatFitsIsAnsweredAndALimitBelowTheBoundAsBefore() {
        var small = t.get("/v1/audit?resource=db/small&limit=0", auditor, null);
        assertEquals(200, small.status(), small.body());
        assertEquals(3, small.body().strip().split("\n").length, small.body());
        var timeline = t.get("/v1/audit/timeline?resource=db/small", auditor, null);
        assertEquals(200, timeline.status(), timeline.body());
        assertEquals(3, timeline.body().strip().split("\n").length, timeline.body());
        var newest = t.get("/v1/audit?resource=db/big&limit=5", auditor, null);
        assertEquals(200, newest.status(), newest.body());
        String[] lines = newest.body().strip().split("\n");
        assertEquals(5, lines.length, newest.body());
        assertTrue(lines[4].contains("\"token\":" + (AuditApi.MAX_ANSWER_EVENTS + 1)), lines[4]);
    }
}
