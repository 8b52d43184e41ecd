package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence status --holder}: what a holder holds, from the ledger and the store, with a fake clock. */
@ProcessTest
class HolderStatusTest {
    static final String MAIN = "git:proj:refs/heads/main";

    @TempDir
    Path tmp;

    FakeClock clock;
    FenceCli fence;

    @BeforeEach
    void setUp() {
        clock = new FakeClock(Instant.parse("2026-11-29T14:30:00Z"));
        fence = new FenceCli(
                new GitFixture(tmp).env(Map.of("FENCE_STORE", "sqlite:" + tmp.resolve("fence.db"))), clock);
    }

    private long acquire(String resource, String holder, String ttl) throws Exception {
        return grant(resource, holder, ttl).get("token").asLong();
    }

    private com.fasterxml.jackson.databind.JsonNode grant(String resource, String holder, String ttl) throws Exception {
        FenceCli.Run r =
                fence.run(tmp, "lease", "acquire", "--resource", resource, "--holder", holder, "--ttl", ttl, "--json");
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out());
    }

    /**
     * After the store starts a new generation (here the README's recovery step for a SQLite file copied
     * back: its meta row deleted), the old state is still there, lease and all; the holder must be told its
     * lease is void, not that it holds it (the text a session-start hook puts back into an agent's context).
     */
    @Test
    void aLeaseOfAnOlderGenerationIsReportedVoidNotHeld() throws Exception {
        long token = acquire(MAIN, "agent-a", "1h");
        try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + tmp.resolve("fence.db"));
                var st = c.createStatement()) {
            st.executeUpdate("DELETE FROM meta");
        }
        clock.set(Instant.parse("2026-11-29T14:31:00Z"));

        FenceCli.Run prompt = fence.run(tmp, "status", "--holder", "agent-a", "--prompt");
        assertEquals(0, prompt.exit(), prompt.all());
        assertEquals(
                List.of("as of 14:31:00Z you hold no lease on " + MAIN + "; your token " + token + " is void: the lease"
                        + " store lost or rolled back its data and started a new generation since. Re-read the resource"
                        + " and acquire again before you write."),
                prompt.out().lines().toList());
        FenceCli.Run status = fence.run(tmp, "lease", "status", "--resource", MAIN, "--json");
        JsonNode o = Json.read(status.out());
        assertEquals(true, o.get("lease").isNull(), o.toString());
        assertEquals(true, o.get("leaseVoid").asBoolean(), o.toString());
        assertEquals(token, o.get("lastLease").get("token").asLong());
        // Another agent is not told the void lease "lapsed" in the future: it simply acquires.
        assertEquals(
                0,
                fence.run(tmp, "lease", "acquire", "--resource", MAIN, "--holder", "agent-b")
                        .exit());
    }

    @Test
    void promptLinesSayWhatIsHeldLapsedReleasedAndSuperseded() throws Exception {
        long mainA = acquire(MAIN, "agent-a", "30s");
        clock.set(Instant.parse("2026-11-29T14:31:00Z"));
        long mainB = acquire(MAIN, "agent-b", "1h");
        clock.set(Instant.parse("2026-11-29T14:35:00Z"));
        long migrations = acquire("db/migrations", "agent-a", "10m");
        long cache = acquire("cache/warm", "agent-a", "1m");
        var docsGrant = grant("docs/release", "agent-a", "1h");
        long docs = docsGrant.get("token").asLong();
        assertEquals(
                0,
                fence.holding(docsGrant)
                        .run(
                                tmp,
                                "lease",
                                "release",
                                "--resource",
                                "docs/release",
                                "--holder",
                                "agent-a",
                                "--token",
                                Long.toString(docs))
                        .exit());
        clock.set(Instant.parse("2026-11-29T14:40:05Z"));

        FenceCli.Run prompt = fence.run(tmp, "status", "--holder", "agent-a", "--prompt");
        assertEquals(0, prompt.exit(), prompt.all());
        assertEquals(
                List.of(
                        "as of 14:40:05Z you hold db/migrations with token " + migrations + " until 14:45:00Z.",
                        "as of 14:40:05Z your lease on cache/warm (token " + cache + ") ran out at 14:36:00Z and no one"
                                + " has taken it since; renew it before you write.",
                        "as of 14:40:05Z you hold no lease on docs/release; you released token " + docs
                                + " at 14:35:00Z.",
                        "as of 14:40:05Z you hold no lease on " + MAIN + "; your last token there was " + mainA
                                + ", superseded by " + mainB + " (held by agent-b)."),
                prompt.out().lines().toList());

        FenceCli.Run json = fence.run(tmp, "status", "--holder", "agent-a", "--json");
        JsonNode leases = Json.read(json.out()).get("leases");
        assertEquals(4, leases.size());
        assertEquals("held", leases.get(0).get("state").asText());
        assertEquals("superseded", leases.get(3).get("state").asText());
        assertEquals("agent-b", leases.get(3).get("currentHolder").asText());
        assertEquals(mainB, leases.get(3).get("current").asLong());

        FenceCli.Run human = fence.run(tmp, "status", "--holder", "agent-a");
        assertEquals(0, human.exit(), human.all());
        assertEquals(5, human.out().lines().count(), human.all());

        clock.advance(Duration.ofHours(2));
        FenceCli.Run b = fence.run(tmp, "status", "--holder", "agent-b", "--prompt");
        assertEquals(
                "as of 16:40:05Z your lease on " + MAIN + " (token " + mainB + ") ran out at 15:31:00Z and no one has"
                        + " taken it since; renew it before you write.\n",
                b.out());
        FenceCli.Run since = fence.run(tmp, "status", "--holder", "agent-a", "--prompt", "--since", "1h");
        assertEquals("as of 16:40:05Z you (agent-a) hold no leases.\n", since.out());
    }
}
