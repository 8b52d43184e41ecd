package dev.fence.mcp;

import dev.fence.testing.PrivateRedis;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code fence mcp} on a private redis-server. */
class RedisMcpServerTest extends McpServerTestBase {
    @RegisterExtension
    static final PrivateRedis redis = new PrivateRedis();

    @AfterEach
    void emptyTheServer() {
        redis.empty();
    }

    @Override
    protected String storeUrl(Path tmp) {
        return redis.server().url();
    }
}
