package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.FenceCli;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence store retention}: a change is never silent, and a short one wants {@code --force}. */
class StoreRetentionCommandTest {
    @TempDir
    Path tmp;

    FenceCli.Run fence(String... args) {
        return new FenceCli(Map.of("HOME", tmp.toString(), "USER", "ops-admin"), Clock.systemUTC()).run(tmp, args);
    }

    String store() {
        return "sqlite:" + tmp.resolve("fence.db");
    }

    @Test
    void aRetentionUnderADayIsRefusedWithoutForceAndChangesNothing() {
        FenceCli.Run refused = fence("store", "retention", "--store", store(), "--set", "1ms");
        assertEquals(ExitCode.USAGE.code(), refused.exit(), refused.all());
        assertTrue(refused.err().contains("--force"), refused.err());

        FenceCli.Run shown = fence("store", "retention", "--store", store());
        assertTrue(shown.out().contains(": 90d"), shown.all());
        FenceCli.Run audit = fence("audit", "--store", store(), "--type", "retention", "--json");
        assertEquals(0, audit.exit(), audit.all());
        assertEquals("", audit.out().strip(), "nothing was changed, so nothing was recorded");

        FenceCli.Run help = fence("store", "retention", "--help");
        assertTrue(help.out().contains("--force"), help.out());
        assertTrue(help.out().contains("1d"), help.out());
    }

    @Test
    void everyChangeIsALedgerEventThatAuditShows() throws Exception {
        FenceCli.Run forced = fence("store", "retention", "--store", store(), "--set", "1h", "--force");
        assertEquals(0, forced.exit(), forced.all());
        FenceCli.Run back = fence("store", "retention", "--store", store(), "--set", "90d");
        assertEquals(0, back.exit(), back.all());

        FenceCli.Run json = fence("audit", "--store", store(), "--type", "retention", "--json");
        assertEquals(0, json.exit(), json.all());
        String[] lines = json.out().strip().split("\n");
        assertEquals(2, lines.length, json.out());
        JsonNode first = Json.read(lines[0]);
        assertEquals("retention", first.get("type").asText());
        assertEquals("(store)", first.get("resource").asText());
        // The account is the process's own, from the system; a USER naming someone else is recorded beside it.
        String account = System.getProperty("user.name");
        String recorded = account + "/USER=ops-admin";
        assertEquals(recorded, first.get("pusher").asText());
        assertEquals("ledger retention 90d -> 1h", first.get("detail").asText());
        assertEquals(
                "ledger retention 1h -> 90d", Json.read(lines[1]).get("detail").asText());

        FenceCli.Run table = fence("audit", "--store", store());
        assertEquals(0, table.exit(), table.all());
        assertTrue(table.out().contains("retention"), table.out());
        assertTrue(table.out().contains("USER=ops-admin"), table.out());
        assertTrue(table.out().contains("ledger retention 90d -> 1h"), "the table says what changed: " + table.out());

        FenceCli.Run timeline = fence("audit", "timeline", "--store", store(), "--resource", "(store)");
        assertEquals(0, timeline.exit(), timeline.all());
        assertTrue(
                timeline.out().contains("RETENTION store: ledger retention 90d -> 1h by " + recorded), timeline.out());

        FenceCli.Run page = fence("audit", "timeline", "--html", "--store", store());
        assertEquals(0, page.exit(), page.all());
        assertTrue(page.out().contains("<tr data-kind=\"retention\""), page.out());
        assertTrue(page.out().contains("ledger retention 90d -&gt; 1h"), page.out());
    }
}
