package dev.fence.hook;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The hook end to end on a private redis-server; the store is "down" while the server is stopped. */
class RedisPreReceiveTest extends PreReceiveEndToEndTest {
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

    @Override
    String storeUrl() {
        if (!server.isRunning()) {
            server.restart();
        }
        return server.url();
    }

    @Override
    void breakStore() {
        server.stop();
    }

    @Override
    void repairStore() {
        server.restart();
    }
}
