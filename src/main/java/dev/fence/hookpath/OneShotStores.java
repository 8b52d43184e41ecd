package dev.fence.hookpath;

import dev.fence.core.ConfigException;
import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.time.Duration;
import java.util.function.Function;

/**
 * The store seam of the hook path: opens a hook's store for the two or three calls a push makes and no
 * more: one plain connection, no pool, which selects each store's one-shot binding (Redis: a single
 * connection whose transport suits a fresh JVM; SQLite: the driver's native binding, not its JDBC layer).
 * A pool costs a fresh JVM more to start than the calls take (bench: "Java hook, SQLite|Redis").
 */
final class OneShotStores implements Function<String, LeaseStore> {
    static final OneShotStores INSTANCE = new OneShotStores();

    private OneShotStores() {}

    @Override
    public LeaseStore apply(String url) {
        // The hook's store comes from its configuration or command line only, never FENCE_STORE or a default
        // under HOME: on a local-path remote the environment is the pusher's.
        if (url == null || url.isBlank()) {
            throw new ConfigException(
                    "no store configured: set 'store' in the hook's fence.conf or pass --store to the installed hook");
        }
        StoreOptions defaults = StoreOptions.defaults();
        StoreOptions options =
                new StoreOptions(Duration.ofSeconds(2), defaults.retention(), 0, defaults.waitTimeout(), true);
        return Stores.open(url.trim(), options);
    }
}
