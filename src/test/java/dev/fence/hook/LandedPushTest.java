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
import dev.fence.testing.HookedRepo;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Only pushes that land supersede or count: real git, fence's installed pre-receive and post-receive, and
 * an administrator's own {@code update} hook that refuses a ref after fence admitted the push.
 */
@ProcessTest
class LandedPushTest {
    private static final String MAIN = "refs/heads/main";
    private static final String RESOURCE = "git:app:" + MAIN;

    @TempDir
    Path tmp;

    HookedRepo repo;
    String store;
    Path refuse;

    @BeforeEach
    void setUp() throws Exception {
        store = "sqlite:" + tmp.resolve("fence.db");
        repo = HookedRepo.create(tmp, "app", store);
        // The administrator's own rule, enforced after pre-receive: while the marker exists, main is refused.
        refuse = tmp.resolve("refuse-main");
        Path update = repo.bare().resolve("hooks/update");
        Files.writeString(
                update,
                "#!/bin/sh\nif [ \"$1\" = refs/heads/main ] && [ -f '" + refuse + "' ]; then\n"
                        + "  echo \"update: $1 is closed\" >&2\n  exit 1\nfi\nexit 0\n");
        Files.setPosixFilePermissions(update, PosixFilePermissions.fromString("rwxr-xr-x"));
        HookedRepo.Clone seed = repo.clone("carol");
        seed.commit("seed");
        seed.push(List.of(), "HEAD:refs/heads/main").check();
    }

    @Test
    void aTokenlessPushALaterHookRefusedSupersedesNothingAndIsMarkedUnlanded() throws Exception {
        HookedRepo.Clone b = repo.clone("agent-b");
        FenceCli fence = fence("agent-b");
        JsonNode grant = acquire(fence, b);
        long token = grant.get("token").asLong();
        String b1 = b.commit("B: under the lease");
        FenceCli.Run pushed =
                fence.holding(grant).run(b.dir(), "push", "--repo", "app", "--holder", "agent-b", "--json");
        assertEquals(0, pushed.exit(), pushed.all());
        assertEquals(b1, repo.tip(MAIN));

        // carol pushes main without a token: fence admits it (bump), the update hook refuses it.
        Files.writeString(refuse, "");
        HookedRepo.Clone carol = repo.clone("carol");
        String c1 = carol.commit("carol: tokenless");
        HookedRepo.Run refused = carol.push(List.of(), "HEAD:refs/heads/main");
        assertNotEquals(0, refused.exit(), refused.err());
        assertTrue(refused.err().contains("update: refs/heads/main is closed"), refused.err());
        assertFalse(refused.err().contains("superseded agent-b's lease"), refused.err());
        assertEquals(b1, repo.tip(MAIN));

        // agent-b's lease stands, and the last write is still agent-b's.
        JsonNode status = status(fence, b);
        assertEquals("agent-b", status.get("lease").get("holder").asText(), status.toString());
        assertEquals(token, status.get("lease").get("token").asLong(), status.toString());
        assertEquals(token, status.get("lastWrite").get("token").asLong(), status.toString());
        assertEquals(b1, status.get("lastWrite").get("sha").asText(), status.toString());
        FenceCli.Run renewed = renew(fence, b, grant);
        assertEquals(0, renewed.exit(), renewed.all());

        // agent-b pushes again under the same token: it lands (before, carol's unlanded push had fenced it).
        Files.delete(refuse);
        String b2 = b.commit("B: second");
        FenceCli.Run again =
                fence.holding(grant).run(b.dir(), "push", "--repo", "app", "--holder", "agent-b", "--json");
        assertEquals(0, again.exit(), again.all());
        assertEquals(b2, repo.tip(MAIN));

        try (LeaseStore s = Stores.open(store, StoreOptions.defaults())) {
            List<LedgerEvent> unlanded =
                    s.query(new LedgerQuery(RESOURCE, null, null, null, null, Set.of(EventType.UNLANDED), 0));
            assertEquals(1, unlanded.size(), unlanded.toString());
            LedgerEvent u = unlanded.get(0);
            assertEquals("carol", u.pusher());
            assertEquals(c1, u.newSha());
            assertEquals(b1, u.oldSha());
            assertEquals("bumped", u.reason());
            List<LedgerEvent> landed =
                    s.query(new LedgerQuery(RESOURCE, null, null, null, null, Set.of(EventType.LANDED), 0));
            assertTrue(landed.stream().noneMatch(e -> c1.equals(e.newSha())), landed.toString());
        }
        FenceCli.Run audit = fence.run(b.dir(), "audit", "--resource", RESOURCE, "--type", "unlanded");
        assertEquals(0, audit.exit(), audit.all());
        assertTrue(audit.out().contains("unlanded") && audit.out().contains("carol"), audit.out());
        FenceCli.Run timeline = fence.run(b.dir(), "audit", "timeline", "--resource", RESOURCE);
        assertEquals(0, timeline.exit(), timeline.all());
        assertTrue(timeline.out().contains("UNLANDED") && timeline.out().contains("did not land"), timeline.out());
    }

    @Test
    void aTokenlessPushThatLandsSupersedesTheLeaseWhenItLands() throws Exception {
        HookedRepo.Clone b = repo.clone("agent-b");
        FenceCli fence = fence("agent-b");
        JsonNode grant = acquire(fence, b);
        long token = grant.get("token").asLong();

        HookedRepo.Clone carol = repo.clone("carol");
        String c1 = carol.commit("carol: tokenless");
        HookedRepo.Run landed = carol.push(List.of(), "HEAD:refs/heads/main").check();
        assertTrue(landed.err().contains("superseded agent-b's lease on refs/heads/main"), landed.err());
        assertEquals(c1, repo.tip(MAIN));

        JsonNode status = status(fence, b);
        assertEquals("carol", status.get("lastWrite").get("pusher").asText(), status.toString());
        assertEquals(c1, status.get("lastWrite").get("sha").asText(), status.toString());
        FenceCli.Run renewed = fence.holding(grant)
                .run(b.dir(), "lease", "renew", "--repo", "app", "--ref", "main", "--holder", "agent-b");
        assertNotEquals(0, renewed.exit(), "agent-b's token " + token + " is stale: " + renewed.all());
    }

    @Test
    void ofTwoAdmittedPushesOfTheSameUpdateOnlyTheOneThatLandsIsRecordedAsLanded() throws Exception {
        // The administrator's update hook holds a push (after fence admitted it) until it is let go, so that
        // both pushes are admitted before either lands.
        Path update = repo.bare().resolve("hooks/update");
        Files.writeString(
                update,
                "#!/bin/sh\nif [ -n \"$HOLD\" ]; then\n  : > \"$HOLD.in\"\n  i=0\n"
                        + "  while [ ! -f \"$HOLD.go\" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\nfi\nexit 0\n");
        HookedRepo.Clone carol =
                repo.clone("carol").env("HOLD", tmp.resolve("carol").toString());
        String c1 = carol.commit("carol: tokenless");
        HookedRepo.Clone dave =
                repo.clone("dave").env("HOLD", tmp.resolve("dave").toString());
        dave.git("fetch", "-q", carol.dir().toString(), "HEAD").check();
        dave.reset(c1);
        String old = repo.tip(MAIN);

        var first = CompletableFuture.supplyAsync(() -> carol.push(List.of(), "HEAD:refs/heads/main"));
        awaitFile(tmp.resolve("carol.in"));
        var second = CompletableFuture.supplyAsync(() -> dave.push(List.of(), "HEAD:refs/heads/main"));
        awaitFile(tmp.resolve("dave.in"));
        Files.writeString(tmp.resolve("carol.go"), "");
        HookedRepo.Run landed = first.get(60, TimeUnit.SECONDS);
        assertEquals(0, landed.exit(), landed.err());
        assertEquals(c1, repo.tip(MAIN));
        Files.writeString(tmp.resolve("dave.go"), "");
        HookedRepo.Run lost = second.get(60, TimeUnit.SECONDS);
        assertNotEquals(0, lost.exit(), "git applies " + old + " -> " + c1 + " once: " + lost.out() + lost.err());

        try (LeaseStore s = Stores.open(store, StoreOptions.defaults())) {
            List<LedgerEvent> landings = s.query(
                    new LedgerQuery(RESOURCE, null, null, null, null, Set.of(EventType.LANDED, EventType.UNLANDED), 0));
            List<LedgerEvent> ofC1 =
                    landings.stream().filter(e -> c1.equals(e.newSha())).toList();
            assertEquals(2, ofC1.size(), ofC1.toString());
            assertEquals(
                    List.of("carol"),
                    ofC1.stream()
                            .filter(e -> e.type() == EventType.LANDED)
                            .map(LedgerEvent::pusher)
                            .toList(),
                    ofC1.toString());
            assertEquals(
                    List.of("dave"),
                    ofC1.stream()
                            .filter(e -> e.type() == EventType.UNLANDED)
                            .map(LedgerEvent::pusher)
                            .toList(),
                    ofC1.toString());
        }
    }

    private static void awaitFile(Path file) throws InterruptedException {
        for (int i = 0; i < 1200 && !Files.exists(file); i++) {
            Thread.sleep(50);
        }
        assertTrue(Files.exists(file), "the push never reached the update hook: " + file);
    }

    private static JsonNode acquire(FenceCli fence, HookedRepo.Clone clone) throws Exception {
        FenceCli.Run r = fence.run(
                clone.dir(),
                "lease",
                "acquire",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-b",
                "--git-remote",
                "origin",
                "--ttl",
                "10m",
                "--json");
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out());
    }

    private static FenceCli.Run renew(FenceCli fence, HookedRepo.Clone clone, JsonNode grant) {
        return fence.run(
                clone.dir(),
                "lease",
                "renew",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-b",
                "--token",
                grant.get("token").asText(),
                "--proof",
                grant.get("proof").asText(),
                "--ttl",
                "10m");
    }

    private static JsonNode status(FenceCli fence, HookedRepo.Clone clone) throws Exception {
        FenceCli.Run r = fence.run(clone.dir(), "lease", "status", "--repo", "app", "--ref", "main", "--json");
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out());
    }

    private FenceCli fence(String pusher) {
        Map<String, String> env = new HashMap<>(HookedRepo.gitEnv(tmp));
        env.put("FENCE_STORE", store);
        env.put("REMOTE_USER", pusher);
        return new FenceCli(env, Clock.systemUTC());
    }
}
