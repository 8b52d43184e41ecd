package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.FenceCli;
import dev.fence.testing.HookedRepo;
import dev.fence.testing.ProcessTest;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hooked remote whose administrator turned push options off: {@code fence push} cannot send the token,
 * and must not push without it (the hook would judge it tokenless, and a bump would supersede the
 * holder's own lease).
 */
@ProcessTest
class HookedRemoteWithoutPushOptionsTest {
    private static final String MAIN = "refs/heads/main";

    @TempDir
    Path tmp;

    @Test
    void fencePushDoesNotDropTheTokenOnARemoteWhoseHookHasAdmittedItsPushes() throws Exception {
        String store = "sqlite:" + tmp.resolve("fence.db");
        HookedRepo repo = HookedRepo.create(tmp, "app", store);
        HookedRepo.Clone seed = repo.clone("carol");
        seed.commit("seed");
        seed.push(List.of(), "HEAD:refs/heads/main").check();

        HookedRepo.Clone b = repo.clone("agent-b");
        Map<String, String> env = new HashMap<>(HookedRepo.gitEnv(tmp));
        env.put("FENCE_STORE", store);
        env.put("REMOTE_USER", "agent-b");
        FenceCli fence = new FenceCli(env, Clock.systemUTC());
        JsonNode grant = fence.acquireAppMain(b.dir(), "agent-b", "10m");
        long token = grant.get("token").asLong();
        FenceCli holder = fence.holding(grant);
        String b1 = b.commit("B: first");
        FenceCli.Run first = holder.run(b.dir(), "push", "--repo", "app", "--holder", "agent-b");
        assertEquals(0, first.exit(), first.all());
        assertEquals(b1, repo.tip(MAIN));

        HookedRepo.git(HookedRepo.gitEnv(tmp), repo.bare(), "config", "receive.advertisePushOptions", "false")
                .check();
        String b2 = b.commit("B: second");
        FenceCli.Run refused = holder.run(b.dir(), "push", "--repo", "app", "--holder", "agent-b", "--json");
        assertNotEquals(0, refused.exit(), refused.all());
        assertTrue(refused.err().contains("receive.advertisePushOptions true"), refused.all());
        assertEquals(
                "TRANSPORT_ERROR", Json.read(refused.out()).get("remoteStatus").asText(), refused.out());
        assertEquals(b1, repo.tip(MAIN), "nothing was pushed without the token");
        FenceCli.Run status = fence.run(b.dir(), "lease", "status", "--repo", "app", "--ref", "main", "--json");
        JsonNode lease = Json.read(status.out()).get("lease");
        assertEquals("agent-b", lease.get("holder").asText(), status.out());
        assertEquals(token, lease.get("token").asLong(), "the holder's lease stands: " + status.out());

        HookedRepo.git(HookedRepo.gitEnv(tmp), repo.bare(), "config", "receive.advertisePushOptions", "true")
                .check();
        FenceCli.Run again = holder.run(b.dir(), "push", "--repo", "app", "--holder", "agent-b");
        assertEquals(0, again.exit(), again.all());
        assertEquals(b2, repo.tip(MAIN));
    }
}
