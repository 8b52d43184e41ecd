package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
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

    record Result(int exit, String out, String err) {}

    Result fence(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                Map.of("HOME", tmp.toString()),
                Clock.systemUTC(),
                tmp);
        return new Result(Main.run(ctx, args), out.toString(), err.toString());
    }

    String store() {
        return "sqlite:" + tmp.resolve("fence.db");
    }

    /** The tokens of the events a {@code --json} run printed, in its order. */
    static List<Long> tokens(Result r) throws Exception {
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
        Result newest = fence("audit", "--store", store(), "--resource", "db/paged", "--limit", "2", "--json");
        assertEquals(0, newest.exit(), newest.err());
        assertEquals(List.of(4L, 5L), tokens(newest));
        String oldest = Json.read(newest.out().strip().split("\n")[0]).get("at").asText();
        Result before = fence(
                "audit", "--store", store(), "--resource", "db/paged", "--limit", "2", "--until", oldest, "--json");
        assertEquals(0, before.exit(), before.err());
        // The boundary's instant comes again: at or before --until.
        assertEquals(List.of(3L, 4L), tokens(before));

        Result backwards = fence("audit", "--store", store(), "--since", "1m", "--until", "2h");
        assertEquals(ExitCode.USAGE.code(), backwards.exit(), backwards.out());
        assertTrue(backwards.err().contains("--until is before --since"), backwards.err());
        Result help = fence("audit", "--help");
        assertTrue(Arrays.stream(help.out().split("\n")).anyMatch(l -> l.contains("--until=WHEN")), help.out());
    }
}
