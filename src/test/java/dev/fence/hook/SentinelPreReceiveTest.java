package dev.fence.hook;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import dev.fence.testing.SentinelCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The hook end to end with a {@code redis-sentinel://} store: a master and one sentinel that never fails it
 * over here, so the store is "down" while the master is stopped and the sentinel still names it.
 */
@ProcessTest
class SentinelPreReceiveTest extends PreReceiveEndToEndTest {
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

    @Override
    String storeUrl() {
        return cluster.url();
    }

    @Override
    void breakStore() {
        cluster.kill(cluster.masterPort());
    }

    @Override
    void repairStore() {
        cluster.restartEmpty(cluster.dataPorts().get(0));
    }

    /** This cluster's outage is a failover to an empty server (a new generation): none that keeps the data. */
    @Override
    void outage(Outage during) {
        org.junit.jupiter.api.Assumptions.abort(
                "an outage that keeps the data is shown on the single Redis (RedisPreReceiveTest)");
    }
}
