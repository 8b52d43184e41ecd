package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.EventType;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.io.ByteArrayInputStream;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence exec} in-process with the real clock, a real child process and a SQLite store. Loss is
 * induced deterministically: while the child runs, agent B acquires through a clock set past the end of
 * A's lease (the skew of a host whose clock runs ahead), so B's acquire sees A's lease lapsed and takes
 * it; A's next renewal must find the lease lost.
 */
@ProcessTest
class ExecTest {
    static final String R = "db/migrations";

    @TempDir
    Path tmp;

    Map<String, String> env;
    FenceCli fence;
    String store;

    @BeforeEach
    void setUp() {
        store = "sqlite:" + tmp.resolve("fence.db");
        env = new GitFixture(tmp).env(Map.of("FENCE_STORE", store));
        fence = new FenceCli(env, Clock.systemUTC());
    }

    /** Runs exec on another thread, with writers the test can watch. */
    private record Running(CompletableFuture<Integer> exit, StringWriter out, StringWriter err) {}

    private Running start(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(
                () -> fence.run(tmp, new ByteArrayInputStream(new byte[0]), out, err, args)
                        .exit());
        return new Running(exit, out, err);
    }

    private static void await(String what, BooleanSupplier condition, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    /** B acquires as seen from a clock {@code ahead} of real time. */
    private FenceCli.Run acquireAhead(String holder, Duration ahead) {
        FenceCli skewed = new FenceCli(env, new FakeClock(Instant.now().plus(ahead)));
        return skewed.run(tmp, "lease", "acquire", "--resource", R, "--holder", holder, "--ttl", "30s");
    }

    @Test
    void keepsTheLeaseAliveThroughACommandThreeTimesItsTtl() throws Exception {
        Running run = start(
                "exec",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--ttl",
                "1s",
                "--",
                "sh",
                "-c",
                "echo started; sleep 3");
        await("the command to start", () -> run.out().toString().contains("started"), Duration.ofSeconds(10));
        Thread.sleep(2200); // past two TTLs into the command's three
        FenceCli.Run busy = fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-b", "--ttl", "5s");
        assertEquals(4, busy.exit(), busy.all());
        assertTrue(busy.err().contains("held by agent-a"), busy.all());

        assertEquals(0, run.exit().get(20, TimeUnit.SECONDS), run.err().toString());
        assertTrue(
                run.err().toString().contains("agent-a holds db/migrations with token"),
                run.err().toString());
        FenceCli.Run status = fence.run(tmp, "lease", "status", "--resource", R, "--json");
        JsonNode lease = Json.read(status.out()).get("lease");
        assertEquals("agent-a", lease.get("holder").asText(), "renewed when the command ended: " + status.all());
        try (var s = Stores.open(store, StoreOptions.defaults())) {
            assertEquals(
                    1,
                    s.query(new LedgerQuery(R, null, null, null, null, Set.of(EventType.GRANT), 0))
                            .size(),
                    "one grant, renewed, never re-acquired");
        }
    }

    @Test
    void reportsALostLeaseAtOnceAndExits3WhenTheCommandEnds() throws Exception {
        Running run = start(
                "exec",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--ttl",
                "1s",
                "--",
                "sh",
                "-c",
                "echo started; sleep 3; echo done");
        await("the command to start", () -> run.out().toString().contains("started"), Duration.ofSeconds(10));
        FenceCli.Run b = acquireAhead("agent-b", Duration.ofSeconds(5));
        assertEquals(0, b.exit(), b.all());

        await(
                "FENCED on stderr",
                () -> run.err().toString().contains("FENCED resource=db/migrations"),
                Duration.ofSeconds(2));
        assertFalse(run.exit().isDone(), "reported while the command still runs");
        assertFalse(run.out().toString().contains("done"));

        assertEquals(3, run.exit().get(20, TimeUnit.SECONDS));
        String err = run.err().toString();
        assertTrue(err.contains("reason=superseded"), err);
        assertTrue(err.contains("Current lease holder: agent-b"), err);
        assertTrue(err.contains("while the command ran (its exit code was 0)"), err);
        assertTrue(run.out().toString().contains("done"), "the command was not stopped");
    }

    @Test
    void killOnLossStopsTheCommandAtOnce() throws Exception {
        Running run = start(
                "exec",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--ttl",
                "1s",
                "--kill-on-loss",
                "--",
                "sh",
                "-c",
                "echo started; exec sleep 30");
        await("the command to start", () -> run.out().toString().contains("started"), Duration.ofSeconds(10));
        long t0 = System.nanoTime();
        assertEquals(0, acquireAhead("agent-b", Duration.ofSeconds(5)).exit());
        assertEquals(3, run.exit().get(10, TimeUnit.SECONDS), run.err().toString());
        assertTrue(Duration.ofNanos(System.nanoTime() - t0).compareTo(Duration.ofSeconds(8)) < 0);
        assertTrue(
                run.err().toString().contains("the command was stopped"),
                run.err().toString());
    }

    @Test
    void passesStreamsAndExitCodeThroughAndNamesTheLeaseNotTheProof() {
        FenceCli.Run r = fence.runWithInput(
                tmp,
                "hello from stdin\n",
                "exec",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--",
                "sh",
                "-c",
                "cat; echo \"token=$FENCE_TOKEN holder=$FENCE_HOLDER resource=$FENCE_RESOURCE proof=$FENCE_PROOF\";"
                        + " echo oops >&2; exit 7");
        assertEquals(7, r.exit(), r.all());
        assertTrue(r.out().startsWith("hello from stdin\ntoken="), r.all());
        assertTrue(r.out().contains(" holder=agent-a resource=db/migrations proof=\n"), r.all());
        assertTrue(r.err().contains("oops"), r.all());
        assertFalse(r.all().contains("fp2."), "the proof is never printed");
    }

    @Test
    void withATokenItUsesTheHeldLeaseAndRefusesALostOneWithoutRunning() throws Exception {
        FenceCli.Run acquired =
                fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-a", "--ttl", "30s", "--json");
        var grant = Json.read(acquired.out());
        String token = grant.get("token").asText();
        // Without the grant's proof a token is anyone's (direct mode): exec refuses before running anything.
        FenceCli.Run unproven = fence.run(
                tmp, "exec", "--resource", R, "--holder", "agent-a", "--ttl", "30s", "--token", token, "--", "true");
        assertEquals(2, unproven.exit(), unproven.all());
        FenceCli.Run ok = fence.with("FENCE_PROOF", grant.get("proof").asText())
                .run(
                        tmp,
                        "exec",
                        "--resource",
                        R,
                        "--holder",
                        "agent-a",
                        "--ttl",
                        "30s",
                        "--token",
                        token,
                        "--",
                        "sh",
                        "-c",
                        "echo $FENCE_TOKEN");
        assertEquals(0, ok.exit(), ok.all());
        assertEquals(token + "\n", ok.out());

        assertEquals(0, acquireAhead("agent-b", Duration.ofMinutes(1)).exit());
        Path marker = tmp.resolve("ran");
        FenceCli.Run lost = fence.with("FENCE_PROOF", grant.get("proof").asText())
                .run(
                        tmp,
                        "exec",
                        "--resource",
                        R,
                        "--holder",
                        "agent-a",
                        "--ttl",
                        "30s",
                        "--token",
                        token,
                        "--",
                        "touch",
                        marker.toString());
        assertEquals(3, lost.exit(), lost.all());
        assertTrue(lost.err().contains("FENCED resource=db/migrations"), lost.all());
        assertFalse(Files.exists(marker), "the command did not run");
    }

    @Test
    void aMalformedProofStopsExecBeforeTheCommandRunsAsRenewDoes() throws Exception {
        FenceCli.Run acquired =
                fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-a", "--ttl", "30s", "--json");
        String token = Json.read(acquired.out()).get("token").asText();
        Path marker = tmp.resolve("ran");
        FenceCli garbage = fence.with("FENCE_PROOF", "garbage");
        FenceCli.Run exec = garbage.run(
                tmp,
                "exec",
                "--resource",
                R,
                "--holder",
                "agent-a",
                "--ttl",
                "30s",
                "--token",
                token,
                "--",
                "touch",
                marker.toString());
        assertEquals(2, exec.exit(), exec.all());
        assertTrue(exec.err().contains("not a well-formed proof"), exec.all());
        assertFalse(exec.all().contains("garbage"), "a proof, even a mangled one, is never echoed");
        assertFalse(Files.exists(marker), "the command did not run");
        FenceCli.Run renew = garbage.run(
                tmp, "lease", "renew", "--resource", R, "--holder", "agent-a", "--ttl", "30s", "--token", token);
        assertEquals(renew.exit(), exec.exit(), "exec and renew answer a malformed proof alike: " + renew.all());
    }

    @Test
    void busyWhenAnotherHolderHasTheLease() {
        assertEquals(
                0,
                fence.run(tmp, "lease", "acquire", "--resource", R, "--holder", "agent-b", "--ttl", "30s")
                        .exit());
        Path marker = tmp.resolve("ran");
        FenceCli.Run r =
                fence.run(tmp, "exec", "--resource", R, "--holder", "agent-a", "--", "touch", marker.toString());
        assertEquals(4, r.exit(), r.all());
        assertFalse(Files.exists(marker));
    }
}
