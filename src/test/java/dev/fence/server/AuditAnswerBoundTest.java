package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FenceCli;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
    static final Instant seeded = Instant.now().minusSeconds(60).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);

    @BeforeAll
    static void start() {
        String url = "sqlite:" + tmp.resolve("big.db");
        // Several tests read 50,000 to 100,001 events through this server, over a second's work on an idle
        // machine: under the default store timeout of 2 s a busy machine would turn them into 503s that say
        // nothing about the bound these tests are about. The longest timeout fence.conf allows, then.
        t = TestServer.start(tmp.resolve("server"), url, "store-timeout = 4s\n");
        auditor = t.add("reader", Role.AUDITOR);
        agent = t.add("agent-a", Role.AGENT, "agent-a");
        Instant at = seeded;
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
        for (String path : List.of("/v1/audit?limit=0", "/v1/audit?resource=db/big&limit=0")) {
            var r = t.get(path, auditor, null);
            assertEquals(400, r.status(), path + ": " + r.body());
            assertTrue(r.body().contains("more than 100000 events match"), r.body());
            assertTrue(r.body().contains("time windows of fewer events with since and until"), r.body());
        }
        var timeline = t.get("/v1/audit/timeline?resource=db/big", auditor, null);
        assertEquals(400, timeline.status(), timeline.body());
        assertTrue(timeline.body().contains("narrow it with since"), timeline.body());
        var tooMany = t.get("/v1/audit?limit=100001", auditor, null);
        assertEquals(400, tooMany.status(), tooMany.body());
        assertTrue(tooMany.body().contains("limit is at most 100000"), tooMany.body());
    }

    /**
     * One holder's grants are answered whole: fence status and the lease keepers read them all to renew,
     * and a refusal there would let a busy agent's leases lapse.
     */
    @Test
    void aHoldersGrantsAreAnsweredWhole() {
        var grants = t.get("/v1/leases/grants?holder=agent-a&resource=db/big&limit=0", agent, null);
        assertEquals(200, grants.status());
        assertEquals(AuditApi.MAX_ANSWER_EVENTS + 1, grants.body().strip().split("\n").length);
    }

    /** Time windows read a big ledger whole, each within the bound (events at a shared edge in both). */
    @Test
    void timeWindowsWithSinceAndUntilAreAnsweredInFull() {
        var first = t.get("/v1/audit?resource=db/big&limit=0&until=" + seeded.plusMillis(499), auditor, null);
        var second = t.get("/v1/audit?resource=db/big&limit=0&since=" + seeded.plusMillis(500), auditor, null);
        assertEquals(200, first.status(), first.body().length() > 300 ? "" : first.body());
        assertEquals(200, second.status(), second.body().length() > 300 ? "" : second.body());
        assertEquals(
                AuditApi.MAX_ANSWER_EVENTS + 1,
                first.body().strip().split("\n").length + second.body().strip().split("\n").length);
    }

    @Test
    void aWindowThatEndsBeforeItStartsIsRefusedNotAnsweredEmpty() {
        var r = t.get(
                "/v1/audit?resource=db/big&since=" + seeded.plusMillis(500) + "&until=" + seeded.plusMillis(499),
                auditor,
                null);
        assertEquals(400, r.status(), r.body());
        assertTrue(r.body().contains("is before since"), r.body());
        var ages = t.get("/v1/audit?since=1h&until=" + seeded.minusSeconds(7200), auditor, null);
        assertEquals(400, ages.status(), ages.body());
    }

    @Test
    void aMisspeltFilterIsRefusedNotDroppedIntoAnAnswerOfEverything() {
        for (String path : new String[] {
            "/v1/audit?resouce=db/big&limit=10",
            "/v1/audit/timeline?resource=db/big&limt=10",
            "/v1/leases/grants?holder=agent-a&sinse=1h"
        }) {
            var r = t.get(path, auditor, null);
            assertEquals(400, r.status(), path + ": " + r.body());
            assertTrue(r.body().contains("unknown query parameter"), r.body());
        }
    }

    @Test
    void aLedgerQueryPastTheStoreTimeoutSaysHowToNarrowIt() {
        // A server whose store timeout is far below what reading 100,001 events takes.
        TestServer hurried =
                TestServer.start(tmp.resolve("hurried"), "sqlite:" + tmp.resolve("big.db"), "store-timeout = 1ms\n");
        try {
            String reader = hurried.add("reader", Role.AUDITOR);
            var r = hurried.get("/v1/audit?resource=db/big&limit=0", reader, null);
            assertEquals(503, r.status(), r.body().length() > 300 ? r.body().substring(0, 300) : r.body());
            assertTrue(r.body().contains("did not answer within"), r.body());
            assertTrue(r.body().contains("read it in time windows"), r.body());
        } finally {
            hurried.close();
        }
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

    /**
     * The newest N of more are marked as such: the body keeps its shape (lines or a bare array) and a
     * header says that older events matched too, so that they do not read as all there is.
     */
    @Test
    void anAnswerCutByItsLimitSaysSoInAHeader() {
        for (String accept : new String[] {null, "application/json"}) {
            var cut = t.get("/v1/audit?resource=db/small&limit=2", auditor, accept);
            assertEquals(200, cut.status(), cut.body());
            assertEquals("true", cut.header("Fence-Truncated"), cut.body());
            assertTrue(cut.body().contains("\"token\":3") && !cut.body().contains("\"token\":1,"), cut.body());
            var whole = t.get("/v1/audit?resource=db/small&limit=3", auditor, accept);
            assertEquals(200, whole.status(), whole.body());
            assertNull(whole.header("Fence-Truncated"), whole.body());
        }
        var all = t.get("/v1/audit?resource=db/small&limit=0", auditor, null);
        assertNull(all.header("Fence-Truncated"), all.body());
    }

    /** {@code fence audit --server} says on standard error when its answer was cut, up to the bound. */
    @Test
    void fenceAuditThroughTheServerSaysWhenOlderEventsWereLeftOut() {
        // Reading 100,000 events on a busy machine can take longer than the default store timeout of 2 s.
        TestServer patient =
                TestServer.start(tmp.resolve("patient"), "sqlite:" + tmp.resolve("big.db"), "store-timeout = 4s\n");
        try {
            FenceCli cli = new FenceCli(
                    Map.of(
                            "HOME",
                            tmp.toString(),
                            "FENCE_SERVER",
                            patient.url(),
                            "FENCE_CREDENTIAL",
                            patient.add("reader", Role.AUDITOR)),
                    Clock.systemUTC());
            FenceCli.Run cut = cli.run(tmp, "audit", "--resource", "db/small", "--limit", "2", "--json");
            assertEquals(0, cut.exit(), cut.err());
            assertEquals(2, cut.out().strip().split("\n").length, cut.out());
            assertTrue(cut.err().contains("showing the 2 newest of more than 2 matching events"), cut.err());
            FenceCli.Run whole = cli.run(tmp, "audit", "--resource", "db/small", "--limit", "3", "--json");
            assertEquals(0, whole.exit(), whole.err());
            assertEquals("", whole.err());
            // At the bound the client cannot ask for one more: the server's header tells.
            String max = Integer.toString(AuditApi.MAX_ANSWER_EVENTS);
            FenceCli.Run bound = cli.run(tmp, "audit", "--resource", "db/big", "--limit", max, "--json");
            assertEquals(0, bound.exit(), bound.err());
            assertTrue(bound.err().contains("showing the 100000 newest of more than 100000"), bound.err());
        } finally {
            patient.close();
        }
    }
}
