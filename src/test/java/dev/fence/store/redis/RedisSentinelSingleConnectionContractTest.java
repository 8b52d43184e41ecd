package dev.fence.store.redis;

import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;

/** The store contract through Sentinel again, on the one plain connection a hook uses. */
class RedisSentinelSingleConnectionContractTest extends RedisSentinelContractTest {
    @Override
    protected LeaseStore openStore(StoreOptions options) {
        return super.openStore(options.withSingleConnection(true));
    }
}
