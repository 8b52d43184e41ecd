package dev.fence.store.redis;

import dev.fence.core.LeaseStore;
import dev.fence.store.LeaseStoreContractTest;
import dev.fence.store.StoreOptions;
import dev.fence.testing.PrivateRedis;
import dev.fence.testing.ProcessTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The store contract against a private redis-server started for this class (never the shared one). */
@ProcessTest
class RedisContractTest extends LeaseStoreContractTest {
    @RegisterExtension
    static final PrivateRedis redis = new PrivateRedis();

    /** Runs before the base class closes its stores: leaves an empty, running server for the next test. */
    @AfterEach
    void emptyTheServer() {
        redis.empty();
    }

    @Override
    protected LeaseStore openStore(StoreOptions options) {
        return RedisLeaseStore.open(redis.server().url(), options.withCallerClock());
    }

    @Override
    protected void forgetResource(String resource) {
        redis.server().command("DEL", RedisKeys.state(resource));
    }

    @Override
    protected void loseAllData() {
        redis.server().restart();
    }
}
