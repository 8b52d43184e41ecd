package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import dev.fence.testing.HookedRepo.Clone;
import dev.fence.testing.HookedRepo.Run;
import dev.fence.testing.PrivateRedis;
import dev.fence.testing.ProcessTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The hook end to end on a private redis-server; the store is "down" while the server is stopped. */
@ProcessTest
class RedisPreReceiveTest extends PreReceiveEndToEndTest {
    @RegisterExtension
    static final PrivateRedis redis = new PrivateRedis();

    @Override
    String storeUrl() {
        return redis.running().url();
    }

    @Override
    void breakStore() {
        redis.server().stop();
    }

    @Override
    void repairStore() {
        redis.server().restart();
    }

    /** A stall: every client's commands wait (CLIENT PAUSE) for longer than the hook's store timeout. */
    @Override
    void outage(Outage during) throws Exception {
        long until = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(3_000);
        redis.server().command("CLIENT", "PAUSE", "3000", "ALL");
        try {
            during.run();
        } finally {
            long left = until - System.nanoTime();
            if (left > 0) {
                Thread.sleep(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(left) + 50);
            }
        }
    }

    /**
     * The incident on a Redis with snapshot-only persistence: A's grant is newer than the last snapshot,
     * the server crashes and comes back from it, and the same token number would go to B. The restart
     * changes the server's run id, so the store starts a new generation: A's proof is void, B's token is
     * above A's, and A's stale force-push leaves B's commit in place.
     */
    @Test
    void aSnapshotRestartThatLostAGrantFencesTheStaleForcePush() {
        seeded("human");
        redis.server().command("SAVE");
        Grant ga = acquire("agent-a");
        Clone a = repo.clone("agent-a");
        a.sync("main").commit("a1");
        assertTrue(a.push(opts(ga), "HEAD:" + MAIN).ok());

        redis.server().crashAndRestart();

        Grant gb = acquire("agent-b");
        assertNotEquals(ga.generation(), gb.generation(), "a restart starts a new generation");
        assertTrue(gb.token() > ga.token(), "tokens never go backwards: " + gb.token() + " after " + ga.token());
        Clone b = repo.clone("agent-b");
        b.sync("main").commit("b1");
        assertTrue(b.push(opts(gb), "HEAD:" + MAIN).ok());
        String b1 = repo.tip(MAIN);

        a.commit("a2 (stale plan)");
        Run stale = a.push(opts(ga), "+HEAD:" + MAIN);
        assertFenced(stale, "old-generation");
        assertEquals(b1, repo.tip(MAIN), "B's commit is intact");
    }

    /**
     * A store that rolled back without fence noticing (its epoch record rolled back with it, as when the
     * identity is restored by hand): the resource's counter goes back, but a grant is above its own time,
     * so B's grant after the rollback is above A's, never A's token again with another proof; B writes,
     * and A's stale force-push is fenced.
     */
    @Test
    void aStoreRolledBackUnnoticedStillGrantsAboveTheTokensItForgot() {
        seeded("human");
        String key = "fence:{" + resource(MAIN) + "}:state";
        redis.server().command("COPY", key, key + ":before", "REPLACE");
        Grant ga = acquire("agent-a");
        Clone a = repo.clone("agent-a");
        a.sync("main").commit("a1");
        assertTrue(a.push(opts(ga), "HEAD:" + MAIN).ok());

        // Roll the resource back to before A's grant, keeping the identity (no new generation).
        redis.server().command("COPY", key + ":before", key, "REPLACE");
        Grant gb = acquire("agent-b");
        assertTrue(gb.token() > ga.token(), "the rolled-back store granted " + gb.token() + " after " + ga.token());

        Clone b = repo.clone("agent-b");
        b.sync("main").commit("b1");
        assertTrue(b.push(opts(gb), "HEAD:" + MAIN).ok());
        String b1 = repo.tip(MAIN);
        a.commit("a2");
        Run stale = a.push(opts(ga), "+HEAD:" + MAIN);
        assertFalse(stale.ok(), stale.err());
        assertTrue(stale.err().contains("FENCED"), stale.err());
        assertEquals(b1, repo.tip(MAIN), "B's commit is intact");
    }
}
