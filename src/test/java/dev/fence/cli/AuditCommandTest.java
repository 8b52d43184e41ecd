package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FenceCli;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence audit}'s window: {@code --until} ends it, {@code --limit} keeps its newest events. */
class AuditCommandTest {
    @TempDir
    Path tmp;

    FenceCli.Run fence(String... args) {
        return new FenceCli(Map.of("HOME", tmp.toString()), Clock.systemUTC()).run(tmp, args);
    }

    String store() {
        return "sqlite:" + tmp.resolve("fence.db");
    }

    /** The tokens of the events a {@code --json} run printed, in its order. */
    static List<Long> tokens(FenceCli.Run r) throws Exception {
        List<Long> out = new ArrayList<>();
        for (String line : r.out().strip().split("\n")) {
            out.add(Json.read(line).get("token").asLong());
        }
        return out;
    }

    @Test
    void untilEndsTheWindowAndLimitKeepsItsNewest() throws Exception {
        Instant start = Instant.now().minusSeconds(600);
        List<LedgerEvent> events = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            events.add(LedgerEvent.lease(start.plusSeconds(i), EventType.GRANT, "db/paged", "agent-a", i));
        }
        try (LeaseStore s = Stores.open(store(), StoreOptions.defaults())) {
            s.append(events);
        }
        FenceCli.Run newest = fence("audit", "--store", store(), "--resource", "db/paged", "--limit", "2", "--json");
        assertEquals(0, newest.exit(), newest.err());
        assertEquals(List.of(4L, 5L), tokens(newest));
        String oldest = Json.read(newest.out().strip().split("\n")[0]).get("at").asText();
        FenceCli.Run before = fence(
                "audit", "--store", store(), "--resource", "db/paged", "--limit", "2", "--until", oldest, "--json");
        assertEquals(0, before.exit(), before.err());
        // The boundary's instant comes again: at or before --until.
        assertEquals(List.of(3L, 4L), tokens(before));

        FenceCli.Run backwards = fence("audit", "--store", store(), "--since", "1m", "--until", "2h");
        assertEquals(ExitCode.USAGE.code(), backwards.exit(), backwards.out());
        assertTrue(backwards.err().contains("--until is before --since"), backwards.err());
        FenceCli.Run help = fence("audit", "--help");
        assertTrue(Arrays.stream(help.out().split("\n")).anyMatch(l -> l.contains("--until=WHEN")), help.out());
    }

    /**
     * Events past {@code --limit} are not dropped in silence: a flood of noise on another branch would
     * otherwise push a bump on main out of an auditor's view with nothing to say it is missing.
     */
    @Test
    void eventsPastTheLimitAreLeftOutWithANoticeOnStandardError() throws Exception {
        Instant start = Instant.now().minusSeconds(600);
        List<LedgerEvent> events = new ArrayList<>();
        events.add(LedgerEvent.lease(start, EventType.GRANT, "git:app:refs/heads/main", "deploy", 1));
        for (int i = 1; i <= 4; i++) {
            events.add(LedgerEvent.lease(
                    start.plusSeconds(i), EventType.GRANT, "git:app:refs/heads/noise", "noise", i + 1));
        }
        try (LeaseStore s = Stores.open(store(), StoreOptions.defaults())) {
            s.append(events);
        }
        FenceCli.Run table = fence("audit", "--store", store(), "--since", "1d", "--limit", "4");
        assertEquals(0, table.exit(), table.err());
        assertTrue(!table.out().contains("deploy"), table.out());
        assertTrue(
                table.err().contains("showing the 4 newest of more than 4 matching events")
                        && table.err().contains("--limit 0 for all"),
                table.err());
        FenceCli.Run json = fence("audit", "--store", store(), "--since", "1d", "--limit", "4", "--json");
        assertEquals(0, json.exit(), json.err());
        // The lines stay events, every one of them: the notice is on standard error only.
        assertEquals(List.of(2L, 3L, 4L, 5L), tokens(json));
        assertTrue(json.err().contains("showing the 4 newest"), json.err());

        for (String limit : new String[] {"5", "0"}) {
            FenceCli.Run whole = fence("audit", "--store", store(), "--since", "1d", "--limit", limit, "--json");
            assertEquals(0, whole.exit(), whole.err());
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L), tokens(whole));
            assertEquals("", whole.err(), "--limit " + limit);
        }
    }
}
