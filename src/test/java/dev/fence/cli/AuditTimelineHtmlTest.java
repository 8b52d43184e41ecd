package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.FenceCli;
import dev.fence.testing.LegacyGrants;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence audit timeline --html}: the page from a real SQLite ledger, and its refusals of bad input. */
class AuditTimelineHtmlTest {
    @TempDir
    Path tmp;

    String store() {
        return "sqlite:" + tmp.resolve("fence.db");
    }

    FenceCli.Run fence(String... args) {
        return new FenceCli(Map.of("HOME", tmp.toString()), Clock.systemUTC()).run(tmp, args);
    }

    void lease(String resource, String holder) {
        String grant = tmp.resolve("grant-" + Math.abs(holder.hashCode())).toString();
        FenceCli.Run r = fence(
                "lease",
                "acquire",
                "--store",
                store(),
                "--resource",
                resource,
                "--holder",
                holder,
                "--grant-file",
                grant);
        assertEquals(0, r.exit(), r.err());
        FenceCli.Run rel = fence("lease", "release", "--store", store(), "--grant-file", grant);
        assertEquals(0, rel.exit(), rel.err());
    }

    @Test
    void writesOnePagePerSelectionWithALanePerHolder() {
        lease("db/migrations", "agent-a");
        // A name no new grant may carry (Names.requireHolder), as a store written by an older fence holds it.
        LegacyGrants.grant(store(), "db/migrations", "<script>alert(1)</script>");
        lease("files/config", "agent-b");

        FenceCli.Run one = fence("audit", "timeline", "--html", "--store", store(), "--resource", "db/migrations");
        assertEquals(0, one.exit(), one.err());
        assertTrue(one.out().startsWith("<!DOCTYPE html>"), one.out());
        assertTrue(one.out().contains("data-lane=\"agent-a\""));
        assertTrue(one.out().contains("data-lane=\"&lt;script&gt;alert(1)&lt;/script&gt;\""));
        assertFalse(one.out().contains("<script>alert"));
        assertFalse(one.out().contains("data-resource=\"files/config\""), "only the resource asked for");
        assertEquals(2, one.out().split("data-kind=\"lease\"", -1).length - 1, "two leases, two bars");

        FenceCli.Run all = fence("audit", "timeline", "--html", "--store", store());
        assertEquals(0, all.exit(), all.err());
        assertTrue(all.out().contains("data-resource=\"files/config\"")
                && all.out().contains("data-resource=\"db/migrations\""));

        FenceCli.Run two = fence(
                "audit",
                "timeline",
                "--html",
                "--store",
                store(),
                "--resource",
                "db/migrations",
                "--resource",
                "files/config");
        assertEquals(0, two.exit(), two.err());
        assertTrue(two.out().contains("data-resource=\"files/config\"")
                && two.out().contains("data-lane=\"agent-a\""));
        assertEquals(
                2,
                fence("audit", "timeline", "--store", store(), "--resource", "a", "--resource", "b")
                        .exit(),
                "the text timeline is one resource's");

        FenceCli.Run none =
                fence("audit", "timeline", "--html", "--store", store(), "--until", Instant.EPOCH.toString());
        assertEquals(0, none.exit(), none.err());
        assertTrue(none.out().contains("data-empty"), "nothing before --until");
    }

    @Test
    void refusesOptionsThatDoNotGoTogether() {
        assertEquals(
                2,
                fence("audit", "timeline", "--html", "--json", "--store", store())
                        .exit());
        assertEquals(
                2,
                fence("audit", "timeline", "--html", "--ref", "main", "--store", store())
                        .exit());
        FenceCli.Run js = fence("audit", "timeline", "--html", "--store", store(), "--commit-url", "javascript:{sha}");
        assertEquals(2, js.exit());
        assertTrue(js.err().contains("--commit-url must be an http(s) URL"), js.err());
        assertEquals(
                2,
                fence("audit", "timeline", "--resource", "x", "--store", store(), "--commit-url", "https://x/{sha}")
                        .exit());
        FenceCli.Run until = fence("audit", "timeline", "--html", "--store", store(), "--until", "yesterday");
        assertEquals(2, until.exit());
        assertTrue(until.err().contains("--until must be"), until.err());
    }
}
