package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The grant travels from {@code lease acquire} to {@code exec}, {@code push}, {@code renew} and {@code
 * release}, and nothing takes the lease again or shortens it behind the harness's back. In-process, on
 * a SQLite file, with a fake clock deciding expiry.
 */
@ProcessTest
class GrantTravelTest {
    static final String R = "db/migrations";

    @TempDir
    Path tmp;

    GitFixture git;
    FakeClock clock;
    String store;

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        store = "sqlite:" + tmp.resolve("fence.db");
    }

    FenceCli fence(Map<String, String> extra) {
        Map<String, String> env = new HashMap<>(extra);
        env.put("FENCE_STORE", store);
        return new FenceCli(git.env(env), clock);
    }

    JsonNode json(FenceCli.Run r) throws Exception {
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out());
    }

    /**
     * The holder takes its live lease again (a FENCED remote-changed message asks it to, so that the lease
     * records the branch as it is now) by showing the grant file it holds; naming the holder alone, as any
     * agent that read a FENCED message could, is busy.
     */
    @Test
    void aLiveLeaseIsTakenAgainOnlyByShowingItsGrantFile() throws Exception {
        FenceCli fence = fence(Map.of());
        Path file = tmp.resolve("grants/r.grant");
        String[] acquire = {"lease", "acquire", "--resource", R, "--holder", "agent-a", "--ttl", "10m", "--json"};
        long first = json(fence.run(tmp, with(acquire, "--grant-file", file.toString())))
                .get("token")
                .asLong();

        FenceCli.Run named = fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-a");
        assertEquals(4, named.exit(), named.all());
        assertTrue(named.err().contains("did not show its grant"), named.err());
        assertTrue(named.err().contains("--grant-file FILE"), named.err());
        // A grant file of another resource, or none yet, shows nothing; and it is left as it was.
        Path other = tmp.resolve("grants/other.grant");
        json(fence.run(
                tmp,
                "lease",
                "acquire",
                "--resource",
                "db/other",
                "--holder",
                "agent-a",
                "--grant-file",
                other.toString(),
                "--json"));
        String otherBefore = Files.readString(other);
        assertEquals(
                4,
                fence.run(tmp, with(acquire, "--grant-file", other.toString())).exit());
        assertEquals(otherBefore, Files.readString(other));
        assertEquals(
                4,
                fence.run(
                                tmp,
                                with(
                                        acquire,
                                        "--grant-file",
                                        tmp.resolve("new.grant").toString()))
                        .exit());
        assertFalse(Files.exists(tmp.resolve("new.grant")));

        JsonNode again = json(fence.run(tmp, with(acquire, "--grant-file", file.toString())));
        assertTrue(again.get("token").asLong() > first, again.toString());
        assertEquals(
                again.get("token").asLong(),
                Json.read(Files.readString(file)).get("token").asLong());
        JsonNode status = json(fence.run(tmp, "lease", "status", "--resource", R, "--json"));
        assertEquals(
                again.get("token").asLong(), status.get("lease").get("token").asLong(), status.toString());

        // The grant shown by its token and proof, as 'fence push --token N' takes it; a wrong proof shows none.
        String token = again.get("token").asText();
        String proof = again.get("proof").asText();
        String forged = proof.substring(0, proof.length() - 1) + (proof.endsWith("A") ? "B" : "A");
        assertEquals(
                4,
                fence.run(tmp, with(acquire, "--token", token, "--proof", forged))
                        .exit());
        assertEquals(
                4,
                fence.run(tmp, with(acquire, "--token", Long.toString(first), "--proof", proof))
                        .exit());
        assertEquals(
                2, fence.run(tmp, with(acquire, "--token", token)).exit(), "a token shows nothing without its proof");
        assertEquals(2, fence.run(tmp, with(acquire, "--proof", proof)).exit());
        JsonNode third = json(fence(Map.of("FENCE_PROOF", proof)).run(tmp, with(acquire, "--token", token)));
        assertTrue(third.get("token").asLong() > again.get("token").asLong(), third.toString());
    }

    private static String[] with(String[] args, String... more) {
        String[] out = java.util.Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, out, args.length, more.length);
        return out;
    }

    @Test
    void renewWithoutTtlKeepsTheGrantsTtl() throws Exception {
        FenceCli fence = fence(Map.of());
        Path file = tmp.resolve("grants/r.grant");
        JsonNode g = json(fence.run(
                tmp,
                "lease",
                "acquire",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--ttl",
                "10m",
                "--grant-file",
                file.toString(),
                "--json"));
        assertEquals(
                g.get("proof").asText(),
                Json.read(Files.readString(file)).get("proof").asText());
        assertEquals(
                "rw-------",
                java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));

        clock.advance(Duration.ofMinutes(4));
        JsonNode renewed = json(fence.run(tmp, "lease", "renew", "--grant-file", file.toString(), "--json"));
        assertEquals(
                clock.instant().plus(Duration.ofMinutes(10)).toString(),
                renewed.get("expiresAt").asText());
        assertEquals(g.get("token").asLong(), renewed.get("token").asLong());

        JsonNode shorter =
                json(fence.run(tmp, "lease", "renew", "--grant-file", file.toString(), "--ttl", "1m", "--json"));
        assertEquals(
                clock.instant().plus(Duration.ofMinutes(1)).toString(),
                shorter.get("expiresAt").asText());
    }

    @Test
    void aBareTokenNeverFallsBackToAShorterDefaultTtl() throws Exception {
        FenceCli fence = fence(Map.of());
        JsonNode g = json(
                fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-a", "--ttl", "10m", "--json"));
        FenceCli.Run r = fence.run(
                tmp,
                "lease",
                "renew",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--token",
                g.get("token").asText());
        assertEquals(2, r.exit(), r.all());
        assertTrue(r.err().contains("--ttl"), r.err());
        FenceCli.Run status = fence.run(tmp, "lease", "status", "--resource", R, "--json");
        assertEquals(
                g.get("expiresAt").asText(),
                Json.read(status.out()).get("lease").get("expiresAt").asText());
    }

    @Test
    void execDoesNotTakeTheHoldersOwnLeaseAgain() throws Exception {
        FenceCli fence = fence(Map.of());
        JsonNode g = json(
                fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-a", "--ttl", "2m", "--json"));
        Path marker = tmp.resolve("ran");
        FenceCli.Run r =
                fence.run(tmp, "exec", "--resource", R, "--holder", "agent-a", "--", "touch", marker.toString());
        assertEquals(2, r.exit(), r.all());
        assertTrue(r.err().contains("already holds"), r.err());
        assertFalse(Files.exists(marker), "nothing ran");
        // Not even after the lease lapsed: no one took it since, so it is still the harness's grant.
        clock.advance(Duration.ofMinutes(5));
        assertEquals(
                2,
                fence.run(tmp, "exec", "--resource", R, "--holder", "agent-a", "--", "true")
                        .exit());
        JsonNode st = json(fence.run(tmp, "lease", "status", "--resource", R, "--json"));
        assertEquals(g.get("token").asLong(), st.get("latestGranted").asLong(), "no new grant");

        // Under the grant, exec runs and the grant stays current: release with it succeeds.
        FenceCli under = fence(Map.of(
                "FENCE_TOKEN",
                g.get("token").asText(),
                "FENCE_PROOF",
                g.get("proof").asText()));
        FenceCli.Run ran = under.run(
                tmp,
                "exec",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--ttl",
                "2m",
                "--",
                "sh",
                "-c",
                "echo $FENCE_TOKEN");
        assertEquals(0, ran.exit(), ran.all());
        assertEquals(g.get("token").asText() + "\n", ran.out());
        assertEquals(
                0,
                under.run(tmp, "lease", "release", "--resource", R, "--holder", "agent-a")
                        .exit());
    }

    @Test
    void theEnvironmentsGrantIsUsedOnlyForItsOwnResourceAndHolder() throws Exception {
        FenceCli fence = fence(Map.of());
        JsonNode g = json(
                fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-a", "--ttl", "2m", "--json"));
        FenceCli other = fence(Map.of(
                "FENCE_TOKEN", g.get("token").asText(),
                "FENCE_PROOF", g.get("proof").asText(),
                "FENCE_RESOURCE", "db/other"));
        FenceCli.Run r = other.run(tmp, "lease", "release", "--resource", R, "--holder", "agent-a");
        assertEquals(2, r.exit(), r.all());
        assertTrue(r.err().contains("acts on a grant"), r.err());
        // Another grant's proof (another resource) does not release this one.
        JsonNode elsewhere = json(fence.run(
                tmp, "lease", "acquire", "--resource", "db/x", "--holder", "agent-a", "--ttl", "2m", "--json"));
        FenceCli wrongProof = fence(Map.of(
                "FENCE_TOKEN",
                g.get("token").asText(),
                "FENCE_PROOF",
                elsewhere.get("proof").asText()));
        assertEquals(
                3,
                wrongProof
                        .run(tmp, "lease", "release", "--resource", R, "--holder", "agent-a")
                        .exit());
        FenceCli.Run otherHolder = fence.run(
                tmp,
                "lease",
                "release",
                "--grant-file",
                tmp.resolve("missing.grant").toString());
        assertEquals(2, otherHolder.exit(), otherHolder.all());
    }

    @Test
    void aPushUnderAnOlderGrantOfTheSameHolderIsFencedNotSentUnderTheNewerOne() throws Exception {
        Path bare = git.bareWithMain("app");
        Path clone = git.clone(bare, "agent-a");
        FenceCli fence = fence(Map.of());
        Path file = tmp.resolve("app-main.grant");
        json(fence.runAcquireAppMain(clone, "agent-a", "--ttl", "2m", "--grant-file", file.toString(), "--json"));
        // The harness (or a confused agent) acquires again: the grant in the file is now an older one.
        clock.advance(Duration.ofMinutes(3));
        JsonNode newer = fence.acquireAppMain(clone, "agent-a", "2m");
        String seed = git.tip(bare, "refs/heads/main");
        git.commit(clone, "notes.txt", "A\n", "A: change");
        FenceCli.Run r = fence.run(clone, "push", "--grant-file", file.toString(), "--json");
        assertEquals(3, r.exit(), r.all());
        String machine = Json.read(r.out()).get("message").get(0).asText();
        assertTrue(machine.endsWith("reason=superseded"), machine);
        assertEquals(seed, git.tip(bare, "refs/heads/main"), "nothing was pushed");
        assertTrue(newer.get("token").asLong() > 0);
    }
}
