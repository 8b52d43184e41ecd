package dev.fence.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link RedisServer} for one test class: started before its first test, stopped after its last. A
 * class registers it as a static field ({@code @RegisterExtension static final PrivateRedis redis = new
 * PrivateRedis();}); without a {@code redis-server} on the PATH the class is skipped, not failed.
 */
public final class PrivateRedis implements BeforeAllCallback, AfterAllCallback {
    private RedisServer server;

    @Override
    public void beforeAll(ExtensionContext context) {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        server = RedisServer.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    /** The class's server, as the last test left it. */
    public RedisServer server() {
        if (server == null) {
            throw new IllegalStateException("the server runs only while the test class does");
        }
        return server;
    }

    /** The class's server, started again if a test stopped it and thawed if one froze it. */
    public RedisServer running() {
        RedisServer s = server();
        if (!s.isRunning()) {
            s.restart();
        }
        s.thaw();
        return s;
    }

    /** {@link #running()}, and with no data. */
    public RedisServer empty() {
        RedisServer s = running();
        assertEquals("+OK", s.command("FLUSHALL"));
        return s;
    }
}
