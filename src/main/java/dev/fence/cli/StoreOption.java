package dev.fence.cli;

import dev.fence.core.LeaseStore;
import dev.fence.store.Stores;
import picocli.CommandLine.Option;

/** {@code --store URL}, falling back to {@code FENCE_STORE} and then the default SQLite file. */
final class StoreOption {
    @Option(
            names = "--store",
            paramLabel = "URL",
            description = "Store URL: sqlite:<path> | redis://[user:pass@]host:port[/db] | rediss://..."
                    + " | redis-sentinel://[user:pass@]host:port[,host:port...]/master-name[/db]"
                    + " | postgresql://user[:pass]@host:port[,host:port...]/database"
                    + " (default: $FENCE_STORE, else sqlite:~/.local/share/fence/fence.db).")
    String store;

    /** Opens the store this option (or the environment) names. */
    LeaseStore open(Context ctx) {
        return Stores.open(Stores.resolveUrl(store, ctx.env()), ctx.storeDefaults());
    }
}
