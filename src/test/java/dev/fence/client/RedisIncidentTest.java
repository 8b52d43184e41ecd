package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.testing.RedisServer;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** The incident against a private redis-server. */
class RedisIncidentTest extends IncidentTestBase {
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

    @AfterEach
    void emptyTheServer() {
        assertEquals("+OK", server.command("FLUSHALL"));
    }

    @Override
    protected String storeUrl(Path tmp) {
        return server.url();
    }
}
