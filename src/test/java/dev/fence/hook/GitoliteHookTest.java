package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.GitProcess;
import dev.fence.testing.Gitolite;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fence's hook in a gitolite3 repository, pushed to over ssh on loopback with two agent keys and one
 * human key. gitolite runs every push as its one account ({@code USER} is that account for everyone) and
 * names the key's user in {@code GL_USER}; its own {@code update} hook enforces its rules after fence's
 * pre-receive admitted a push, so a push it refuses must supersede nothing. Real gitolite, real sshd, real
 * git, the installed hooks (pre-receive and post-receive) on SQLite.
 */
@ProcessTest
class GitoliteHookTest {
    private static final String MAIN = "refs/heads/main";
    private static final String RESOURCE = "git:app:" + MAIN;
    /** carol is a person; gitolite denies her main (a rule fence knows nothing of) but not other branches. */
    private static final String CONF =
            """
            repo app
                -       refs/heads/main = carol
                RW+     =   agent-a agent-b carol
            """;

    @TempDir
    Path tmp;

    Gitolite gitolite;
    GitFixture git;
    String store;
    Path bare;

    @BeforeEach
    void setUp() throws Exception {
        gitolite = Gitolite.start(tmp.resolve("gitolite"), CONF, "agent-a", "agent-b", "carol");
        git = new GitFixture(tmp);
        store = "sqlite:" + tmp.resolve("fence.db");
        bare = gitolite.repo("app");
        // main's first commit, before fence is installed.
        Path seed = clone("agent-a");
        git.commit(seed, "README", "seed\n", "seed");
        git.git(seed, "push", "-q", "origin", "main");
        FenceCli.Run installed = fence().run(
                        tmp,
                        "install",
                        "--bare",
                        bare.toString(),
                        "--launcher",
                        git.launcher().toString(),
                        "--store",
                        store);
        assertEquals(0, installed.exit(), installed.all());
        Files.writeString(bare.resolve("fence.conf"), "agent-pushers = agent-*\n", StandardOpenOption.APPEND);
    }

    @AfterEach
    void tearDown() {
        if (gitolite != null) {
            gitolite.close();
        }
    }

    @Test
    void thePusherIsTheKeysGitoliteUserNotTheSharedAccount() throws Exception {
        Path a = clone("agent-a");
        Path b = clone("agent-b");
        Path carol = clone("carol");
        String seed = git.tip(bare, MAIN);

        // An agent's key without a token: agent-pushers matches GL_USER, so leaving out -o fence= is refused.
        // Read as USER (the shared account) it would have been a person's push, bumped and landed.
        git.commit(b, "b.txt", "B\n", "B: tokenless");
        GitProcess.Result tokenless = git.gitAllowingFailure(b, "push", "origin", "main");
        assertNotEquals(0, tokenless.exit());
        assertTrue(tokenless.stderr().contains("reason=token-required"), tokenless.stderr() + gitolite.log());
        assertEquals(seed, git.tip(bare, MAIN));

        // The other agent's key, with its lease: accepted and recorded under its own name.
        FenceCli fence = fence();
        JsonNode grantA = fence.acquireAppMain(a, "agent-a", "5m");
        long token = grantA.get("token").asLong();
        String a1 = git.commit(a, "a.txt", "A\n", "A: under the lease");
        FenceCli.Run pushed = fence.holding(grantA).run(a, "push", "--repo", "app", "--holder", "agent-a", "--json");
        assertEquals(0, pushed.exit(), pushed.all() + gitolite.log());
        assertEquals(a1, git.tip(bare, MAIN));

        // The person's key on a branch gitolite lets her write: a tokenless push, bumped under her name.
        git.commit(carol, "c.txt", "C\n", "carol: feature");
        git.git(carol, "push", "-q", "origin", "HEAD:refs/heads/feature");

        try (LeaseStore s = Stores.open(store, StoreOptions.defaults())) {
            List<LedgerEvent> events = s.query(LedgerQuery.all());
            assertEquals(List.of("agent-b"), pushers(events, EventType.REJECT, MAIN), events.toString());
            assertEquals(List.of("agent-a"), pushers(events, EventType.ACCEPT, MAIN), events.toString());
            assertEquals(List.of("carol"), pushers(events, EventType.BUMP, "refs/heads/feature"), events.toString());
            String shared = System.getProperty("user.name");
            for (LedgerEvent e : events) {
                assertTrue(
                        e.pusher() == null || !e.pusher().equals(shared),
                        "no push recorded as the shared account: " + e);
            }
            assertEquals(
                    token,
                    events.stream()
                            .filter(e -> e.type() == EventType.ACCEPT)
                            .findFirst()
                            .orElseThrow()
                            .token());
        }
    }

    @Test
    void aPushGitolitesRulesRefuseSupersedesNothingAndIsMarkedUnlanded() throws Exception {
        Path b = clone("agent-b");
        Path carol = clone("carol");
        FenceCli fence = fence();
        JsonNode grant = fence.acquireAppMain(b, "agent-b", "10m");
        long token = grant.get("token").asLong();
        String b1 = git.commit(b, "b.txt", "B\n", "B: under the lease");
        FenceCli.Run pushed = fence.holding(grant).run(b, "push", "--repo", "app", "--holder", "agent-b", "--json");
        assertEquals(0, pushed.exit(), pushed.all() + gitolite.log());

        // carol may not write main (gitolite's rule, enforced in its update hook after fence's pre-receive).
        git.git(carol, "pull", "-q", "origin", "main");
        String c1 = git.commit(carol, "c.txt", "C\n", "carol: tokenless on main");
        GitProcess.Result denied = git.gitAllowingFailure(carol, "push", "origin", "main");
        assertNotEquals(0, denied.exit());
        assertTrue(denied.stderr().contains("DENIED by refs/heads/main"), denied.stderr());
        assertFalse(denied.stderr().contains("superseded agent-b's lease"), denied.stderr());
        assertEquals(b1, git.tip(bare, MAIN));

        FenceCli.Run status = fence.run(b, "lease", "status", "--repo", "app", "--ref", "main", "--json");
        JsonNode st = Json.read(status.out());
        assertEquals("agent-b", st.get("lease").get("holder").asText(), status.all());
        assertEquals(token, st.get("lastWrite").get("token").asLong(), status.all());
        assertEquals(b1, st.get("lastWrite").get("sha").asText(), status.all());

        // agent-b's lease still writes; that push's hook records carol's admission as not landed.
        String b2 = git.commit(b, "b2.txt", "B2\n", "B: second");
        FenceCli.Run again = fence.holding(grant).run(b, "push", "--repo", "app", "--holder", "agent-b", "--json");
        assertEquals(0, again.exit(), again.all() + gitolite.log());
        assertEquals(b2, git.tip(bare, MAIN));
        try (LeaseStore s = Stores.open(store, StoreOptions.defaults())) {
            List<LedgerEvent> unlanded =
                    s.query(new LedgerQuery(RESOURCE, null, null, null, null, Set.of(EventType.UNLANDED), 0));
            assertEquals(1, unlanded.size(), unlanded.toString());
            assertEquals("carol", unlanded.get(0).pusher());
            assertEquals(c1, unlanded.get(0).newSha());
        }
    }

    private static List<String> pushers(List<LedgerEvent> events, EventType type, String ref) {
        return events.stream()
                .filter(e -> e.type() == type && ref.equals(e.ref()))
                .map(LedgerEvent::pusher)
                .toList();
    }

    /** A clone of the gitolite repository over ssh with {@code user}'s key. */
    private Path clone(String user) {
        Path dir = tmp.resolve("clone-" + user + "-" + System.nanoTime());
        Map<String, String> env = new HashMap<>(git.env());
        env.put("GIT_SSH_COMMAND", gitolite.sshCommand(user));
        GitProcess.run(tmp, env, "clone", "-q", gitolite.url("app"), dir.toString());
        git.git(dir, "config", "core.sshCommand", gitolite.sshCommand(user));
        git.git(dir, "symbolic-ref", "HEAD", MAIN);
        return dir;
    }

    private FenceCli fence() {
        return new FenceCli(git.env(Map.of("FENCE_STORE", store)), Clock.systemUTC());
    }
}
