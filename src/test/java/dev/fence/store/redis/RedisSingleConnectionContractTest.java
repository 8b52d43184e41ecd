package dev.fence.store.redis;

import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;

/** The store contract again, on the one plain connection a hook uses ({@link StoreOptions#singleConnection()}). */
class RedisSingleConnectionContractTest extends RedisContractTest {
    @Override
    protected LeaseStore openStore(StoreOptions options) {
        return super.openStore(options.withSingleConnection(true));
    }
}
