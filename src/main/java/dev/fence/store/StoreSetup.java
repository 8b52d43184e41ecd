package dev.fence.store;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * How a store is set up, as far as fence's safety depends on it: what {@code fence doctor} and {@code
 * fence serve}'s start-up check. Read by {@link Stores#inspect}; judged elsewhere.
 */
public sealed interface StoreSetup {
    /** The store URL, passwords masked. */
    String describe();

    /**
     * A store whose set-up is not read (PostgreSQL, for now): only whether it answers is checked.
     *
     * @param describe the store's kind, e.g. {@code postgresql}
     */
    record Unjudged(String describe) implements StoreSetup {}

    /**
     * A SQLite file.
     *
     * @param file the database file (it may not exist yet)
     */
    record Sqlite(String describe, Path file) implements StoreSetup {}

    /**
     * A Redis server: the one the URL names, or for {@code redis-sentinel://} the master its sentinels name.
     *
     * @param server {@code host:port} of the server read
     * @param viaSentinel whether the URL is a {@code redis-sentinel://} one
     * @param info {@code INFO}'s fields ({@code role}, {@code connected_slaves}, {@code maxmemory_policy},
     *     {@code aof_enabled}, …); empty when the server refused {@code INFO}
     * @param config the {@code CONFIG GET} values read ({@code appendonly}, {@code appendfsync}, {@code save},
     *     {@code maxmemory-policy}, {@code min-replicas-to-write}); one the server refused is absent
     */
    record Redis(
            String describe, String server, boolean viaSentinel, Map<String, String> info, Map<String, String> config)
            implements StoreSetup {
        public Redis {
            info = Map.copyOf(info);
            config = Map.copyOf(config);
        }

        /** An {@code INFO} field. */
        public Optional<String> info(String field) {
            return Optional.ofNullable(info.get(field));
        }

        /** A {@code CONFIG GET} value. */
        public Optional<String> config(String parameter) {
            return Optional.ofNullable(config.get(parameter));
        }
    }
}
