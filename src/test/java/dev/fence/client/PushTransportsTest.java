package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.EventType;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.SmartHttp;
import dev.fence.testing.Sshd;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence push} over the transports agents really use, through the {@code git} binary: ssh to a
 * private {@code sshd} on loopback (keys made here, commands run by {@code git-shell}) with the
 * clone's {@code core.sshCommand} or {@code GIT_SSH_COMMAND}, and smart HTTP ({@code git http-backend}
 * behind Basic authentication) with the password from a credential helper and the URL from an {@code
 * insteadOf} rewrite. Both remotes run fence's installed hook on the SQLite store.
 */
@ProcessTest
class PushTransportsTest {
    private static final String MAIN = "refs/heads/main";
    private static final String RESOURCE = "git:app:" + MAIN;

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

    @Test
    void overSshWithGitSshCommandThePushLandsUnderTheTokenAndMovesTheRecordedSha() throws Exception {
        Path bare = hooked(git.bareWithMain("app"));
        try (Sshd sshd = Sshd.start(tmp.resolve("sshd"))) {
            Path a = git.clone(bare, "agent-a");
            git.git(a, "remote", "set-url", "origin", sshd.url(bare));
            FenceCli fence = fence(Map.of("GIT_SSH_COMMAND", sshd.sshCommand()));

            JsonNode grant = fence.acquireAppMain(a, "agent-a", "5m");
            assertEquals(git.tip(bare, MAIN), grant.get("grantSha").asText(), "ls-remote over ssh");
            String a1 = git.commit(a, "notes.txt", "A\n", "A: change");
            FenceCli.Run r = fence.holding(grant).run(a, "push", "--repo", "app", "--holder", "agent-a", "--json");
            assertEquals(0, r.exit(), r.all() + "\n--- sshd\n" + sshd.log());
            JsonNode out = Json.read(r.out());
            assertEquals("pushed", out.get("status").asText(), r.all());
            assertTrue(out.get("pushOptions").asBoolean(), "the hook got fence= and fence-proof=: " + r.all());
            assertTrue(out.get("grantShaMoved").asBoolean(), r.all());
            assertEquals(a1, git.tip(bare, MAIN));
            assertFalse(r.out().contains(grant.get("proof").asText()), "the proof is never printed");
            assertFalse(r.err().contains(grant.get("proof").asText()), "the proof is never printed");

            FenceCli.Run status = fence.run(a, "lease", "status", "--repo", "app", "--ref", "main", "--json");
            JsonNode st = Json.read(status.out());
            assertEquals(
                    grant.get("token").asLong(),
                    st.get("lastWrite").get("token").asLong(),
                    status.all());
            assertEquals(a1, st.get("lease").get("grantSha").asText(), "the recorded SHA moved after the push");
        }
    }

    @Test
    void overSshWithCoreSshCommandTheHooksFencedMessageComesBack() throws Exception {
        Path bare = hooked(git.bareWithMain("app"));
        try (Sshd sshd = Sshd.start(tmp.resolve("sshd"))) {
            Path a = git.clone(bare, "agent-a");
            Path b = git.clone(bare, "agent-b");
            for (Path clone : List.of(a, b)) {
                git.git(clone, "remote", "set-url", "origin", sshd.url(bare));
                git.git(clone, "config", "core.sshCommand", sshd.sshCommand());
            }
            FenceCli fence = fence(Map.of());
            JsonNode grantA = fence.acquireAppMain(a, "agent-a", "2s");
            long tokenA = grantA.get("token").asLong();
            String seed = git.tip(bare, MAIN);
            git.commit(a, "notes.txt", "A\n", "A: change");

            PushOutcome o;
            try (LeaseStore s = Stores.open(store, StoreOptions.defaults());
                    LeaseService leases = new LeaseService(s, clock)) {
                // A passes every check on the store, then stops; B is granted the branch meanwhile, so only
                // the remote's hook, reached over ssh, can stop A's push.
                o = new FencedPush(leases, new GitRemotes(git.env()))
                        .pausingBeforePush(() -> {
                            clock.advance(Duration.ofSeconds(3));
                            fence.acquireAppMain(b, "agent-b", "30s");
                        })
                        .push(new FencedPush.Request(
                                a,
                                "origin",
                                null,
                                null,
                                "app",
                                "agent-a",
                                0,
                                grantA.get("proof").asText()));
                List<LedgerEvent> rejects =
                        s.query(new LedgerQuery(RESOURCE, null, null, null, null, Set.of(EventType.REJECT), 0));
                assertEquals(1, rejects.size(), rejects + "\n--- sshd\n" + sshd.log());
            }
            PushOutcome.Fenced f = assertInstanceOf(PushOutcome.Fenced.class, o, () -> o + "\n" + sshd.log());
            assertTrue(f.attempted());
            String machine = f.lines().get(0);
            assertTrue(
                    machine.startsWith("FENCED resource=" + RESOURCE + " ref=" + MAIN + " token=" + tokenA), machine);
            assertTrue(machine.endsWith("reason=superseded"), machine);
            assertEquals(seed, git.tip(bare, MAIN));
        }
    }

    @Test
    void overSmartHttpTheCredentialHelperAndInsteadOfApplyAndStaleInfoIsRemoteChanged() throws Exception {
        Path bare = hooked(git.bareWithMain("app"));
        try (SmartHttp http = SmartHttp.start(tmp, "agent-a", "s3cret-pass")) {
            Path a = git.clone(bare, "agent-a");
            git.git(a, "config", "url." + http.url("") + ".insteadOf", "fence-test:");
            git.git(a, "remote", "set-url", "origin", "fence-test:app.git");
            FenceCli fence = fence(Map.of());

            // Without credentials git fails at once (fence never lets git prompt) and fence says why.
            FenceCli.Run noAuth = fence.runAcquireAppMain(a, "agent-a", "--ttl", "5m", "--json");
            assertEquals(6, noAuth.exit(), noAuth.all());
            assertTrue(http.unauthorized() > 0);

            git.git(
                    a,
                    "config",
                    "credential.helper",
                    "!f() { test \"$1\" = get && echo username=agent-a && echo password=s3cret-pass; }; f");
            JsonNode grant = fence.acquireAppMain(a, "agent-a", "5m");
            String a1 = git.commit(a, "notes.txt", "A\n", "A: change");
            FenceCli.Run r = fence.holding(grant).run(a, "push", "--repo", "app", "--holder", "agent-a", "--json");
            assertEquals(0, r.exit(), r.all());
            JsonNode out = Json.read(r.out());
            assertTrue(out.get("pushOptions").asBoolean(), r.all());
            assertEquals(a1, git.tip(bare, MAIN));
            try (LeaseStore s = Stores.open(store, StoreOptions.defaults())) {
                List<LedgerEvent> accepts =
                        s.query(new LedgerQuery(RESOURCE, null, null, null, null, Set.of(EventType.ACCEPT), 0));
                assertEquals(1, accepts.size(), accepts.toString());
                assertEquals("agent-a", accepts.get(0).pusher(), "the web server's REMOTE_USER is the pusher");
                assertEquals(grant.get("token").asLong(), accepts.get(0).token());
            }

            // Someone moves the branch behind the hook's back (an admin on the server): the expected old id
            // no longer matches, git reports "stale info", and fence push says FENCED remote-changed
            // without moving the recorded SHA.
            Path admin = git.clone(bare, "admin");
            String other = git.commit(admin, "other.txt", "X\n", "admin: change");
            git.git(bare, "fetch", "-q", admin.toString(), "main:refs/admin/main");
            git.git(bare, "update-ref", MAIN, other);
            git.commit(a, "notes.txt", "A again\n", "A: second change");
            FenceCli.Run stale = fence.holding(grant).run(a, "push", "--repo", "app", "--holder", "agent-a", "--json");
            assertEquals(3, stale.exit(), stale.all());
            JsonNode fenced = Json.read(stale.out());
            assertEquals("fenced", fenced.get("status").asText());
            String machine = fenced.get("message").get(0).asText();
            assertTrue(machine.endsWith("reason=remote-changed"), machine);
            assertEquals(other, git.tip(bare, MAIN));
            FenceCli.Run status = fence.run(a, "lease", "status", "--repo", "app", "--ref", "main", "--json");
            assertEquals(
                    a1, Json.read(status.out()).get("lease").get("grantSha").asText(), status.all());
        }
    }

    private FenceCli fence(Map<String, String> extra) {
        Map<String, String> env = new java.util.HashMap<>(extra);
        env.put("FENCE_STORE", store);
        return new FenceCli(git.env(env), clock);
    }

    /** Installs fence's hook in {@code bare} with 'fence install --bare' on the test's store. */
    private Path hooked(Path bare) {
        FenceCli.Run installed = fence(Map.of())
                .run(
                        tmp,
                        "install",
                        "--bare",
                        bare.toString(),
                        "--launcher",
                        git.launcher().toString(),
                        "--store",
                        store);
        assertEquals(0, installed.exit(), installed.all());
        return bare;
    }
}
