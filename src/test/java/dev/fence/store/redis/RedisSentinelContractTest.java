package dev.fence.store.redis;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.core.LeaseStore;
import dev.fence.store.LeaseStoreContractTest;
import dev.fence.store.StoreOptions;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import dev.fence.testing.SentinelCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract through a {@code redis-sentinel://} URL: a master and one sentinel (that never fails it
 * over here), so every call finds the master through the sentinel and behaves as on a plain URL.
 */
@ProcessTest
class RedisSentinelContractTest extends LeaseStoreContractTest {
    static SentinelCluster cluster;

    @BeforeAll
    static void startCluster() {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        cluster = SentinelCluster.start(0, 1, Duration.ofMinutes(5), null);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Runs before the base class closes its stores: leaves an empty master for the next test. */
    @AfterEach
    void emptyTheMaster() {
        cluster.flushMaster();
    }

    @Override
    protected LeaseStore openStore(StoreOptions options) {
        return RedisLeaseStore.open(cluster.url(), options.withCallerClock());
    }

    @Override
    protected void loseAllData() {
        cluster.restartEmpty(cluster.masterPort());
    }
}
