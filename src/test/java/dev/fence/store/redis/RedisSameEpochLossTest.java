package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.core.Grant;
import dev.fence.core.LeaseService;
import dev.fence.core.Resources;
import dev.fence.store.StoreOptions;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Redis loses or rolls back fence's data while its run id and replication id stay the same, so no new
 * generation starts. A later grant of the same resource to the same holder
 * must still not be the very grant (token and proof) that holder's stale session kept.
 */
@ProcessTest
class RedisSameEpochLossTest {
    private static final String MAIN = Resources.forRef("app", "refs/heads/main");
    private static final String FEATURE = Resources.forRef("app", "refs/heads/feature");

    private static Grant acquire(LeaseService leases, String resource, String holder, Duration ttl) {
        return ((LeaseService.AcquireOutcome.Acquired) leases.acquire(resource, holder, ttl, null)).grant();
    }

    /** An in-place restore: the dump.rdb on disk is older, and DEBUG RELOAD NOSAVE loads it; same run id. */
    @Test
    void aReloadOfAnOlderSnapshotDoesNotHandTheSameGrantOutAgain() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer server = RedisServer.start("--enable-debug-command", "yes", "--save", "");
                RedisLeaseStore store = RedisLeaseStore.open(server.url(), StoreOptions.defaults())) {
            LeaseService leases = new LeaseService(store, Clock.systemUTC());
            acquire(leases, FEATURE, "agent-c", Duration.ofMillis(50));
            server.command("SAVE");
            Grant stale = acquire(leases, MAIN, "agent-a", Duration.ofMillis(50));
            Thread.sleep(100);
            server.command("DEBUG", "RELOAD", "NOSAVE");
            Grant fresh = acquire(leases, MAIN, "agent-a", Duration.ofMinutes(1));
            assertNotEquals(
                    stale.proof(), fresh.proof(), "token " + fresh.token() + " granted again with the same proof");
        }
    }

    /**
     * A resource's state hash is gone (evicted during a window with maxmemory-policy allkeys-lru, or deleted by
     * hand) while fence:meta survives: the counter restarts at the generation's floor.
     */
    @Test
    void aLostStateHashDoesNotHandTheSameGrantOutAgain() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer server = RedisServer.start();
                RedisLeaseStore store = RedisLeaseStore.open(server.url(), StoreOptions.defaults())) {
            LeaseService leases = new LeaseService(store, Clock.systemUTC());
            Grant stale = acquire(leases, MAIN, "agent-a", Duration.ofMillis(50));
            Thread.sleep(100);
            server.command("DEL", RedisKeys.state(MAIN));
            Grant fresh = acquire(leases, MAIN, "agent-a", Duration.ofMinutes(1));
            assertNotEquals(
                    stale.proof(), fresh.proof(), "token " + fresh.token() + " granted again with the same proof");
        }
    }
}
