package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.core.Actor;
import dev.fence.core.AdmissionService;
import dev.fence.core.FencePolicy;
import dev.fence.core.Grant;
import dev.fence.core.HostKind;
import dev.fence.core.LeaseService;
import dev.fence.core.PushAttempt;
import dev.fence.core.PushOptions;
import dev.fence.core.Reason;
import dev.fence.core.RefUpdate;
import dev.fence.core.Resources;
import dev.fence.store.StoreOptions;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Redis restarted without persistence between a grant and its use: the old proof is void, tokens go on up. */
@ProcessTest
class GenerationLossTest {
    @Test
    void anOldProofIsRefusedAndNewTokensAreLargerUnderTheNewGeneration() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        String resource = Resources.forRef("app", "refs/heads/main");
        try (RedisServer server = RedisServer.start();
                RedisLeaseStore store = RedisLeaseStore.open(server.url(), StoreOptions.defaults())) {
            LeaseService leases = new LeaseService(store, Clock.systemUTC());
            Grant before = ((LeaseService.AcquireOutcome.Acquired)
                            leases.acquire(resource, "agent-a", Duration.ofMinutes(5), null))
                    .grant();

            server.restart();
            Thread.sleep(5);

            var renew = leases.renew(resource, "agent-a", before.token(), before.proof(), Duration.ofMinutes(5));
            var lost = assertInstanceOf(LeaseService.CheckOutcome.Lost.class, renew);
            assertEquals(Reason.OLD_GENERATION, lost.fenced().reason());

            PushAttempt push = new PushAttempt(
                    "app",
                    new Actor("agent-a", HostKind.PLAIN, null),
                    new PushOptions(OptionalLong.of(before.token()), before.proof(), List.of()),
                    List.of(new RefUpdate("0".repeat(40), "a".repeat(40), "refs/heads/main")));
            var verdict =
                    new AdmissionService(store, FencePolicy.defaults(), Clock.systemUTC()).admit(push, (a, d) -> true);
            assertEquals(
                    Reason.OLD_GENERATION, verdict.refusals().get(0).fenced().reason());

            Grant after = ((LeaseService.AcquireOutcome.Acquired)
                            leases.acquire(resource, "agent-b", Duration.ofMinutes(5), null))
                    .grant();
            assertNotEquals(before.generation(), after.generation());
            assertTrue(after.token() > before.token(), after.token() + " > " + before.token());
        }
    }
}
