package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.core.ConfigException;
import dev.fence.core.Grant;
import dev.fence.core.LeaseService;
import dev.fence.core.StoreUnavailableException;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import dev.fence.testing.SentinelCluster;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * A store opened with a {@code redis-sentinel://} URL on a real master, replica and three sentinels:
 * it finds the master through the sentinels and follows it when a replica is promoted, with tokens that
 * never repeat.
 */
@ProcessTest
class SentinelFailoverTest {
    private static final String RESOURCE = "git:app:refs/heads/main";
    private static final Duration TTL = Duration.ofMinutes(5);

    private SentinelCluster cluster;
    private final List<RedisLeaseStore> stores = new ArrayList<>();

    @BeforeEach
    void needsRedis() {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
    }

    /** A master, {@code replicas} replicas and three sentinels that take a silent master for down after 1 s. */
    private void startCluster(int replicas) {
        cluster = SentinelCluster.start(replicas, 3, Duration.ofMillis(1000), null);
    }

    @AfterEach
    void stopCluster() {
        stores.forEach(RedisLeaseStore::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aStoreFollowsAPromotedReplicaAndItsTokensGoOnUp() {
        startCluster(1);
        RedisLeaseStore store = open(cluster.url(), StoreOptions.defaults());
        LeaseService leases = LeaseService.forAuthenticatedHolders(store, Clock.systemUTC());
        int oldMaster = cluster.masterPort();
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            tokens.add(grant(leases).token());
        }
        String before = leases.identity().generation();
        try (Jedis master = cluster.server(oldMaster)) {
            assertTrue(master.exists(RedisKeys.state(RESOURCE)), "the grants went to the master the sentinels name");
        }

        int newMaster = cluster.failover();
        assertNotEquals(oldMaster, newMaster);

        // The same store object, whose connection went to the old master (now a replica, which dropped it).
        List<Grant> after = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            after.add(grant(leases));
            tokens.add(after.get(i).token());
        }
        assertNotEquals(before, after.get(0).generation(), "the promoted replica is another server: a new generation");
        try (Jedis promoted = cluster.server(newMaster)) {
            assertEquals(
                    Long.toString(tokens.get(tokens.size() - 1)),
                    promoted.hget(RedisKeys.state(RESOURCE), "counter"),
                    "the grants after the failover went to the new master");
        }
        assertStrictlyIncreasing(tokens);

        // A hook's store (one plain connection, opened after the failover) asks the sentinels as well.
        RedisLeaseStore hook = open(cluster.url(), StoreOptions.defaults().withSingleConnection(true));
        long next = grant(LeaseService.forAuthenticatedHolders(hook, Clock.systemUTC()))
                .token();
        assertTrue(next > tokens.get(tokens.size() - 1), next + " after " + tokens);
    }

    @Test
    void grantsGoOnWhenTheMasterIsKilledAndNoAcknowledgedGrantIsHandedOutAgain() throws Exception {
        // Two replicas, so that the promoted one still has a replica to WAIT for.
        startCluster(2);
        // ?wait=1: every grant that was answered has reached a replica (pooled connections, not the pipeline).
        RedisLeaseStore store = open(cluster.url() + "?wait=1&waitTimeout=1s", StoreOptions.defaults());
        LeaseService leases = LeaseService.forAuthenticatedHolders(store, Clock.systemUTC());
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            tokens.add(grant(leases).token());
        }
        String before = leases.identity().generation();
        int oldMaster = cluster.masterPort();
        cluster.kill(oldMaster);

        int refused = 0;
        StoreUnavailableException last = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (tokens.size() < 8) {
            assertTrue(
                    System.nanoTime() < deadline,
                    "no grant within 60 s of the kill; tokens " + tokens + "; last refusal: " + last);
            try {
                tokens.add(grant(leases).token());
            } catch (StoreUnavailableException e) {
                // While the sentinels agree that the master is gone and promote a replica: fail closed.
                refused++;
                last = e;
            }
        }
        assertTrue(refused > 0, "the master was gone for a while");
        assertNotEquals(oldMaster, cluster.masterPort());
        assertNotEquals(before, leases.identity().generation(), "the promoted replica starts a new generation");
        assertStrictlyIncreasing(tokens);
    }

    @Test
    void grantsDuringAFailoverNeverRepeatAndThePromotionStartsANewGeneration() throws Exception {
        startCluster(1);
        RedisLeaseStore store = open(cluster.url(), StoreOptions.defaults());
        LeaseService leases = LeaseService.forAuthenticatedHolders(store, Clock.systemUTC());
        String before = grant(leases).generation();
        List<Grant> grants = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread load = new Thread(() -> {
            while (!stop.get()) {
                try {
                    Grant g = grant(leases);
                    synchronized (grants) {
                        grants.add(g);
                    }
                } catch (RuntimeException e) {
                    // refused during the failover
                }
                try {
                    // Fewer grants than milliseconds: a new generation's floor (the store's clock) is then above
                    // every token of the old one (see StoreIdentity).
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        load.start();
        try {
            Thread.sleep(200);
            cluster.failover();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (true) {
                synchronized (grants) {
                    if (!grants.isEmpty()
                            && !grants.get(grants.size() - 1).generation().equals(before)) {
                        break;
                    }
                }
                assertTrue(System.nanoTime() < deadline, "no grant of a new generation after the failover");
                Thread.sleep(20);
            }
            Thread.sleep(200);
        } finally {
            stop.set(true);
            load.join();
        }
        List<Long> tokens = new ArrayList<>();
        synchronized (grants) {
            grants.forEach(g -> tokens.add(g.token()));
        }
        // Grants the old master answered after the promotion are lost with it; under a new generation every
        // later token is larger still, so none is handed out twice.
        assertStrictlyIncreasing(tokens);
        String after = leases.identity().generation();
        assertNotEquals(before, after, "the promoted replica is another server: a new generation");
    }

    @Test
    void aSentinelThatIsDownIsSkippedAndPasswordsStayOutOfMessages() {
        startCluster(0);
        int dead = cluster.sentinelPorts().get(0);
        String url = cluster.url().replace("127.0.0.1:" + dead + ",", "127.0.0.1:1,");
        RedisLeaseStore store = open(url, StoreOptions.defaults());
        grant(LeaseService.forAuthenticatedHolders(store, Clock.systemUTC()));
        assertEquals(url, store.describe());

        RedisLeaseStore unknown = open(
                cluster.url().replace(SentinelCluster.MASTER, "no-such-master").replace("//", "//u:secret@"),
                StoreOptions.defaults());
        ConfigException e = assertThrows(ConfigException.class, () -> unknown.identity(candidate()));
        assertTrue(e.getMessage().contains("no-such-master"), e.getMessage());
        assertFalse(e.getMessage().contains("secret"), e.getMessage());
        assertFalse(unknown.describe().contains("secret"), unknown.describe());

        RedisLeaseStore nowhere =
                open("redis-sentinel://127.0.0.1:1,127.0.0.1:2/" + SentinelCluster.MASTER, StoreOptions.defaults());
        StoreUnavailableException down =
                assertThrows(StoreUnavailableException.class, () -> nowhere.identity(candidate()));
        assertTrue(
                down.getMessage().contains("127.0.0.1:1") && down.getMessage().contains("127.0.0.1:2"),
                down.getMessage());
    }

    private static dev.fence.core.StoreIdentity candidate() {
        return dev.fence.core.Identities.candidate(java.time.Instant.now());
    }

    private RedisLeaseStore open(String url, StoreOptions options) {
        // Through Stores, as a user's URL goes: the scheme and its query options.
        RedisLeaseStore s = (RedisLeaseStore) Stores.open(url, options);
        stores.add(s);
        return s;
    }

    /**
     * A grant to the one holder these tests use: each replaces its live lease with a new token, as fence
     * serve's service does for an authenticated holder (these tests' services are such, so that a grant
     * needs no earlier grant shown, which a failover may have voided).
     */
    private static Grant grant(LeaseService leases) {
        LeaseService.AcquireOutcome outcome = leases.acquire(RESOURCE, "agent-a", TTL, null);
        if (outcome instanceof LeaseService.AcquireOutcome.Acquired a) {
            return a.grant();
        }
        throw new AssertionError("not granted: " + outcome);
    }

    private static void assertStrictlyIncreasing(List<Long> tokens) {
        for (int i = 1; i < tokens.size(); i++) {
            if (tokens.get(i) <= tokens.get(i - 1)) {
                throw new AssertionError("token " + tokens.get(i) + " (grant " + i + " of " + tokens.size()
                        + ") after " + tokens.get(i - 1) + ": "
                        + tokens.subList(Math.max(0, i - 5), Math.min(tokens.size(), i + 5)));
            }
        }
    }
}
