package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.core.LeaseStore;
import dev.fence.store.LeaseStoreContractTest;
import dev.fence.store.StoreOptions;
import dev.fence.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** The store contract against a private redis-server started for this class (never the shared one). */
class RedisContractTest extends LeaseStoreContractTest {
    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        server = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    /** Runs before the base class closes its stores: leaves an empty, running server for the next test. */
    @AfterEach
    void emptyTheServer() {
        if (!server.isRunning()) {
            server.restart();
        }
        server.thaw();
        assertEquals("+OK", server.command("FLUSHALL"));
    }

    @Override
    protected LeaseStore openStore(StoreOptions options) {
        return RedisLeaseStore.open(server.url(), options);
    }

    @Override
    protected void loseAllData() {
        server.restart();
    }
}
