package dev.fence.hook;

import dev.fence.testing.PrivateRedis;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The hook end to end on a private redis-server; the store is "down" while the server is stopped. */
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
}
