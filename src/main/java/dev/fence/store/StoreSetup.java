package dev.fence.store;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How a store is set up, as far as fence's safety depends on it: what {@code fence doctor} and {@code
 * fence serve}'s start-up check. Read by {@link Stores#inspect}; judged elsewhere.
 */
public sealed interface StoreSetup {
    /** The store URL, passwords masked. */
    String describe();

    /**
     * A PostgreSQL database, as fence's role finds it there.
     *
     * @param describe the store URL, password masked
     * @param sessionSynchronousCommit {@code synchronous_commit} in fence's own sessions, which raise {@code
     *     off} and {@code local} to {@code on}
     * @param settings the settings a grant's durability depends on, each judged: {@code synchronous_commit} as
     *     the server's configuration, the database or fence's role sets it, and {@code synchronous_standby_names}
     */
    record Postgres(String describe, String sessionSynchronousCommit, List<Setting> settings) implements StoreSetup {
        public Postgres {
            settings = List.copyOf(settings);
        }

        /** The settings that make grants less durable than a synchronous standby makes them, in order. */
        public List<Setting> unsafe() {
            return settings.stream().filter(s -> s.fix() != null).toList();
        }
    }

    /**
     * One setting of a store's server, judged where it was read.
     *
     * @param name the setting's name, e.g. {@code synchronous_commit}
     * @param detail its value and what that means for grants, one line for an operator
     * @param fix what to change, one line; null when the setting is safe as it is
     */
    record Setting(String name, String detail, String fix) {
        public Setting {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(detail, "detail");
        }
    }

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
