package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.ObjectIds;
import dev.fence.json.Json;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence push}, {@code status}, {@code exec} and {@code guard} in server mode, end to end: real
 * HTTP on loopback to an in-process {@code fence serve} on SQLite, the real git, and a bare repository
 * whose pre-receive and post-receive hooks are the curl shim asking the same server. The agents hold
 * only their agent credentials (bound to their holder names), through {@code FENCE_CREDENTIAL_FILE}.
 */
@ProcessTest
class ServerModeClientTest {
    static final String MAIN = "refs/heads/main";
    static final String RESOURCE = "git:app:" + MAIN;

    @TempDir
    Path tmp;

    TestServer t;
    GitFixture git;
    Path credentialDir;
    String agentA;
    String agentB;

    @BeforeEach
    void setUp() throws IOException {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("server.db"), "agent-pushers = agent-*\n");
        agentA = t.add("agent-a", Role.AGENT);
        agentB = t.add("agent-b", Role.AGENT);
        git = new GitFixture(tmp);
        credentialDir = tmp.resolve("credentials");
        Files.createDirectories(credentialDir);
    }

    @AfterEach
    void tearDown() {
        t.close();
        String log = String.join("\n", t.log);
        assertFalse(log.contains("fp2."), "no proof reaches the server's log:\n" + log);
        for (String secret : new String[] {agentA, agentB}) {
            assertFalse(log.contains(secret.substring(secret.indexOf(':') + 1)), "a secret reached the log");
        }
    }

    /**
     * fence as the owner of {@code credential}, with {@code FENCE_SERVER} set and the credential in a
     * file: a credential in {@code FENCE_CREDENTIAL} would reach the remote's shim through git push's
     * environment on a local remote, and the shim takes its environment over its configuration.
     */
    FenceCli as(String credential) {
        Path file = credentialDir.resolve(credential.substring(0, credential.indexOf(':')));
        try {
            Files.writeString(file, credential + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new FenceCli(
                git.env(Map.of(
                        "FENCE_SERVER",
                        t.url(),
                        "FENCE_CREDENTIAL_FILE",
                        file.toString(),
                        "FENCE_LAUNCHER",
                        git.launcher().toString())),
                Clock.systemUTC());
    }

    /** A bare repository whose hooks are the curl shim asking the test server with a hook credential. */
    Path shimmedRemote() throws IOException {
        Path bare = git.bareWithMain("app");
        git.git(bare, "config", "receive.advertisePushOptions", "true");
        for (String hook : List.of("pre-receive", "post-receive")) {
            Path h = bare.resolve("hooks").resolve(hook);
            Files.copy(Path.of("hooks/pre-receive-curl.sh"), h, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(h, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Files.writeString(
                bare.resolve("hooks/fence-shim.conf"),
                dev.fence.install.HookScripts.shimConf(
                                t.url(),
                                t.add("githost", Role.HOOK),
                                new dev.fence.install.ShimSettings(dev.fence.core.FencePolicy.defaults(), "app", null))
                        + "FENCE_SHIM_BUDGET=10\n");
        return bare;
    }

    JsonNode acquire(FenceCli fence, Path clone, String holder, String ttl) throws Exception {
        return fence.acquireAppMain(clone, holder, ttl);
    }

    static FenceCli.Run push(FenceCli fence, Path clone, String holder) {
        return fence.run(clone, "push", "--repo", "app", "--holder", holder, "--json");
    }

    static JsonNode pushed(FenceCli.Run r) throws Exception {
        assertEquals(0, r.exit(), r.all());
        JsonNode n = Json.read(r.out());
        assertEquals("pushed", n.get("status").asText(), r.all());
        return n;
    }

    /** The lease's recorded SHA, read through the server. */
    String recordedSha(FenceCli fence, Path cwd) throws Exception {
        FenceCli.Run r = fence.run(cwd, "lease", "status", "--resource", RESOURCE, "--json");
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out()).get("lastLease").get("grantSha").asText();
    }

    @Test
    void theIncidentThroughTheServerFencesTheStalePushAndMovesTheRecordedShaOnlyOnSuccess() throws Exception {
        Path bare = shimmedRemote();
        FenceCli a = as(agentA);
        FenceCli b = as(agentB);
        Path cloneA = git.clone(bare, "agent-a");
        Path cloneB = git.clone(bare, "agent-b");
        String seed = git.tip(bare, MAIN);

        JsonNode grantA = acquire(a, cloneA, "agent-a", "1s");
        assertEquals(seed, grantA.get("grantSha").asText());
        String a1 = git.commit(cloneA, "notes.txt", "A was here\n", "A: first change");
        JsonNode first = pushed(push(a, cloneA, "agent-a"));
        assertTrue(first.get("pushOptions").asBoolean(), "the shim takes push options: " + first);
        assertTrue(first.get("grantShaMoved").asBoolean(), first.toString());
        assertEquals(a1, git.tip(bare, MAIN));
        assertEquals(a1, recordedSha(a, cloneA), "a successful push moves the recorded SHA through the server");

        git.commit(cloneA, "notes.txt", "A was here, then paused\n", "A: second change");
        Thread.sleep(1300); // A pauses past its 1 s TTL

        git.git(cloneB, "pull", "-q", "--ff-only");
        JsonNode grantB = acquire(b, cloneB, "agent-b", "30s");
        assertEquals(a1, grantB.get("grantSha").asText(), "B's lease records A's pushed tip");
        String b1 = git.commit(cloneB, "notes.txt", "B rewrote it\n", "B: rewrite");
        pushed(push(b, cloneB, "agent-b"));
        assertEquals(b1, git.tip(bare, MAIN));
        assertEquals(b1, recordedSha(b, cloneB));

        FenceCli.Run stale = push(a, cloneA, "agent-a");
        assertEquals(3, stale.exit(), stale.all());
        JsonNode f = Json.read(stale.out());
        assertEquals("fenced", f.get("status").asText());
        assertFalse(f.get("attempted").asBoolean(), "nothing is sent for a lost lease");
        String machine = f.get("message").get(0).asText();
        assertTrue(machine.startsWith("FENCED resource=" + RESOURCE + " ref=" + MAIN + " token="), machine);
        assertTrue(machine.endsWith("reason=superseded"), machine);
        assertTrue(stale.err().contains("Current lease holder: agent-b"), stale.all());
        assertFalse(stale.all().contains("fp2."), "the proof is never printed");
        assertEquals(b1, git.tip(bare, MAIN), "B's work survives");
        assertEquals(b1, recordedSha(b, cloneB), "a fenced push moves no SHA");

        // A's harness re-reads what A holds, through the server, for A's context.
        FenceCli.Run statusA = a.run(cloneA, "status", "--holder", "agent-a", "--prompt");
        assertEquals(0, statusA.exit(), statusA.all());
        assertTrue(
                statusA.out()
                        .matches("as of \\d\\d:\\d\\d:\\d\\dZ you hold no lease on " + Pattern.quote(RESOURCE)
                                + "; your last token there was "
                                + grantA.get("token").asLong() + ", superseded by "
                                + grantB.get("token").asLong() + " \\(held by agent-b\\)\\.\\n"),
                statusA.out());
        FenceCli.Run statusB = b.run(cloneB, "status", "--holder", "agent-b", "--prompt");
        assertEquals(0, statusB.exit(), statusB.all());
        assertTrue(
                statusB.out()
                        .contains("you hold " + RESOURCE + " with token "
                                + grantB.get("token").asLong() + " until "),
                statusB.out());
        assertTrue(
                statusB.out().contains("fence push expects the remote at " + ObjectIds.abbreviate(b1)), statusB.out());

        // B hands over; A takes a fresh lease but pushes its old plan: the push reaches the remote, whose
        // shim asks the server, which refuses it. The recorded SHA stays where the grant put it.
        FenceCli.Run released = b.run(
                cloneB,
                "lease",
                "release",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-b",
                "--token",
                grantB.get("token").asText());
        assertEquals(0, released.exit(), released.all());
        JsonNode again = acquire(a, cloneA, "agent-a", "30s");
        assertEquals(b1, again.get("grantSha").asText(), "the fresh grant records B's tip");
        FenceCli.Run overwrite = push(a, cloneA, "agent-a");
        assertEquals(3, overwrite.exit(), overwrite.all());
        JsonNode o = Json.read(overwrite.out());
        assertTrue(o.get("attempted").asBoolean(), overwrite.all());
        assertTrue(o.get("message").get(0).asText().endsWith("reason=foreign-overwrite"), overwrite.all());
        assertEquals(b1, git.tip(bare, MAIN));
        assertEquals(b1, recordedSha(a, cloneA), "a refused push moves no SHA");

        // A re-plans on top of B's work: accepted, and the recorded SHA follows.
        git.git(cloneA, "fetch", "-q", "origin");
        git.git(cloneA, "reset", "-q", "--hard", "origin/main");
        String a3 = git.commit(cloneA, "more.txt", "A, on top of B\n", "A: on top of B");
        pushed(push(a, cloneA, "agent-a"));
        assertEquals(a3, git.tip(bare, MAIN));
        assertEquals(a3, recordedSha(a, cloneA));
    }

    @Test
    void anAgentCredentialActsOnlyAsItsOwnHolder() throws Exception {
        Path bare = shimmedRemote();
        FenceCli a = as(agentA);
        FenceCli b = as(agentB);
        Path cloneA = git.clone(bare, "agent-a");
        acquire(a, cloneA, "agent-a", "30s");
        git.commit(cloneA, "notes.txt", "A\n", "A: change");
        String seed = git.tip(bare, MAIN);

        FenceCli.Run pushAsA = push(b, cloneA, "agent-a");
        assertEquals(6, pushAsA.exit(), pushAsA.all());
        assertTrue(pushAsA.err().contains("may not act as holder 'agent-a'"), pushAsA.all());
        assertEquals(seed, git.tip(bare, MAIN), "nothing was pushed");
        assertEquals(seed, recordedSha(a, cloneA));

        FenceCli.Run statusOfA = b.run(cloneA, "status", "--holder", "agent-a", "--prompt");
        assertEquals(6, statusOfA.exit(), statusOfA.all());
        assertTrue(statusOfA.err().contains("may not act as holder 'agent-a'"), statusOfA.all());

        FenceCli.Run execAsA =
                b.run(cloneA, "exec", "--resource", "db/migrations", "--holder", "agent-a", "--", "true");
        assertEquals(6, execAsA.exit(), execAsA.all());

        FenceCli noCredential = new FenceCli(git.env(Map.of("FENCE_SERVER", t.url())), Clock.systemUTC());
        FenceCli.Run anonymous = noCredential.run(cloneA, "status", "--holder", "agent-a");
        assertEquals(6, anonymous.exit(), anonymous.all());
        assertTrue(anonymous.err().contains("FENCE_CREDENTIAL"), anonymous.all());

        FenceCli.Run down =
                a.run(cloneA, "push", "--server", "http://127.0.0.1:1", "--repo", "app", "--holder", "agent-a");
        assertEquals(5, down.exit(), down.all());
        FenceCli.Run both = a.run(
                cloneA, "push", "--server", t.url(), "--store", "sqlite:/x.db", "--repo", "app", "--holder", "agent-a");
        assertEquals(2, both.exit(), both.all());
    }

    @Test
    void execRenewsThroughTheServerWhileTheCommandRuns() throws Exception {
        FenceCli a = as(agentA);
        Instant before = Instant.now();
        FenceCli.Run r = a.run(
                tmp,
                "exec",
                "--resource",
                "db/migrations",
                "--holder",
                "agent-a",
                "--ttl",
                "300ms",
                "--",
                "sleep",
                "1.2");
        assertEquals(0, r.exit(), r.all());
        Matcher m = Pattern.compile("holds db/migrations with token (\\d+) while the command runs")
                .matcher(r.err());
        assertTrue(m.find(), r.all());
        long token = Long.parseLong(m.group(1));

        FenceCli.Run status = a.run(tmp, "lease", "status", "--resource", "db/migrations", "--json");
        assertEquals(0, status.exit(), status.all());
        JsonNode last = Json.read(status.out()).get("lastLease");
        assertEquals(token, last.get("token").asLong());
        Instant expires = Instant.parse(last.get("expiresAt").asText());
        assertTrue(
                Duration.between(before, expires).compareTo(Duration.ofMillis(1200)) > 0,
                "renewed past the 300 ms TTL until the command ended: " + last);

        long renewed = metric("fence_lease_operations_total{operation=\"renew\",outcome=\"renewed\"}");
        assertTrue(renewed >= 4, "every third of the TTL, plus before and after: " + renewed);

        // Another holder's live lease: busy, nothing runs.
        FenceCli b = as(agentB);
        FenceCli.Run held =
                a.run(tmp, "lease", "acquire", "--resource", "db/other", "--holder", "agent-a", "--ttl", "30s");
        assertEquals(0, held.exit(), held.all());
        FenceCli.Run busy = b.run(tmp, "exec", "--resource", "db/other", "--holder", "agent-b", "--", "touch", "ran");
        assertEquals(4, busy.exit(), busy.all());
        assertFalse(Files.exists(tmp.resolve("ran")));

        // An old token: FENCED before the command starts.
        FenceCli.Run stale = a.run(
                tmp,
                "exec",
                "--resource",
                "db/migrations",
                "--holder",
                "agent-a",
                "--ttl",
                "30s",
                "--token",
                Long.toString(token - 1),
                "--",
                "touch",
                "ran");
        assertEquals(3, stale.exit(), stale.all());
        assertTrue(stale.err().startsWith("FENCED resource=db/migrations ref=- token="), stale.all());
        assertFalse(Files.exists(tmp.resolve("ran")));
    }

    @Test
    void theGuardReadsLeasesThroughTheServer() throws Exception {
        Path bare = git.bareWithMain("app"); // no fence hook: what the guard lets through lands
        FenceCli a = as(agentA);
        Path clone = git.clone(bare, "agent-a");
        FenceCli.Run installed = a.run(
                tmp,
                "guard",
                "install",
                "--clone",
                clone.toString(),
                "--holder",
                "agent-a",
                "--repo",
                "app",
                "--server",
                t.url());
        assertEquals(0, installed.exit(), installed.all());
        assertEquals(t.url(), git.git(clone, "config", "--get", "fence.server").strip());
        assertEquals(
                1,
                git.gitAllowingFailure(clone, "config", "--get", "fence.store").exit());

        git.commit(clone, "notes.txt", "A\n", "A: change");
        Map<String, String> pushEnv = new HashMap<>(git.env());
        pushEnv.put("FENCE_CREDENTIAL_FILE", credentialDir.resolve("agent-a").toString());
        GitProcess.Result refused = GitProcess.runAllowingFailure(clone, pushEnv, "push", "origin", "main");
        assertNotEquals(0, refused.exit(), refused.stderr());
        assertTrue(refused.stderr().contains("FENCED resource=" + RESOURCE), refused.stderr());
        assertTrue(refused.stderr().contains("fence guard (pre-push): push refused"), refused.stderr());

        acquire(a, clone, "agent-a", "30s");
        GitProcess.Result allowed = GitProcess.runAllowingFailure(clone, pushEnv, "push", "origin", "main");
        assertEquals(0, allowed.exit(), allowed.stderr());
        assertEquals(git.head(clone), git.tip(bare, MAIN));

        // Without a credential the guard cannot ask the server: it fails closed.
        git.commit(clone, "notes.txt", "A again\n", "A: another change");
        GitProcess.Result noCredential = GitProcess.runAllowingFailure(clone, git.env(), "push", "origin", "main");
        assertNotEquals(0, noCredential.exit(), noCredential.stderr());
        assertTrue(noCredential.stderr().contains("fence guard: cannot check the lease"), noCredential.stderr());

        // Re-installing with --store switches the clone back to direct mode.
        FenceCli.Run direct =
                a.run(tmp, "guard", "install", "--clone", clone.toString(), "--store", "sqlite:" + tmp.resolve("d.db"));
        assertEquals(0, direct.exit(), direct.all());
        assertEquals(
                1,
                git.gitAllowingFailure(clone, "config", "--get", "fence.server").exit());
        assertTrue(direct.out().contains("unset git config fence.server"), direct.all());
    }

    private long metric(String series) {
        String body = t.get("/metrics", null, null).body();
        for (String line : body.split("\n")) {
            if (line.startsWith(series + " ")) {
                return (long)
                        Double.parseDouble(line.substring(series.length() + 1).strip());
            }
        }
        return 0;
    }
}
