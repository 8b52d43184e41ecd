package dev.fence.client;

import dev.fence.testing.PrivateRedis;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The incident against a private redis-server. */
class RedisIncidentTest extends IncidentTestBase {
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
