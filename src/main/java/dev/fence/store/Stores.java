package dev.fence.store;

import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseStore;
import dev.fence.store.postgres.PostgresLeaseStore;
import dev.fence.store.redis.RedisLeaseStore;
import dev.fence.store.redis.RedisSetups;
import dev.fence.store.sqlite.SqliteLeaseStore;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/**
 * Opens a store from its URL. The one place that names the concrete stores.
 *
 * <ul>
 *   <li>{@code sqlite:<path>} — a SQLite file (created with its directory on first use). The default,
 *       at {@code $XDG_DATA_HOME/fence/fence.db} or {@code ~/.local/share/fence/fence.db}.
 *   <li>{@code redis://[user:pass@]host:port[/db]} and {@code rediss://…} (TLS).
 *   <li>{@code redis-sentinel://[user:pass@]host:port[,host:port…]/master-name[/db]}: the master that
 *       Redis Sentinel names, followed through failovers.
 *   <li>{@code postgresql://user[:pass]@host:port[,host:port…]/database} (or {@code postgres://…}).
 * </ul>
 *
 * Each may end in a query string: {@code timeout} (default 2s), {@code retention} (ledger, default
 * 90d), for Redis {@code wait} (replicas to WAIT for after writes) and {@code waitTimeout}, and for
 * Sentinel {@code sentinelUser} and {@code sentinelPassword} (the sentinels' own credentials).
 */
public final class Stores {
    /** The environment variable that names the store when {@code --store} is not given. */
    public static final String ENV = "FENCE_STORE";

    private Stores() {}

    /** The store URL in effect: the option, else {@code FENCE_STORE}, else the default SQLite file. */
    public static String resolveUrl(String option, Map<String, String> env) {
        if (option != null && !option.isBlank()) {
            return option.trim();
        }
        String fromEnv = env.get(ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            return fromEnv.trim();
        }
        return "sqlite:" + defaultSqlitePath(env);
    }

    /** The per-user default SQLite file. */
    public static Path defaultSqlitePath(Map<String, String> env) {
        String xdg = env.get("XDG_DATA_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg, "fence", "fence.db");
        }
        String home = env.get("HOME");
        if (home == null || home.isBlank()) {
            throw new ConfigException("no store given and HOME is not set: pass --store or set " + ENV);
        }
        return Path.of(home, ".local", "share", "fence", "fence.db");
    }

    /**
     * Starts, in the background, what opening a store of {@code kind} ({@code sqlite} or {@code redis}, as
     * {@code fence install} names the store a hook was installed for) will need first: for SQLite, loading
     * the driver's native library; for Redis, setting up the JDK's socket classes and Jedis's. A hook's
     * store thread otherwise does that work once it has read the configuration. Anything else starts
     * nothing. A wrong guess costs only that work: the store the configuration names is opened as always.
     */
    public static void preload(String kind) {
        if ("sqlite".equals(kind)) {
            // The thread is started here, and the store's classes are first loaded on it: loading and
            // initialising them on the caller's thread (a hook's main thread, which reads the push meanwhile)
            // took a millisecond before the library could begin. Bench: "Java hook, SQLite" rows.
            Thread t = new Thread(new SqlitePreload(), "fence-sqlite-library");
            t.setDaemon(true);
            t.start();
        } else if ("redis".equals(kind)) {
            RedisLeaseStore.preload();
        }
    }

    /** The work of {@link #preload} for SQLite, on its thread. */
    private static final class SqlitePreload implements Runnable {
        @Override
        public void run() {
            SqliteLeaseStore.loadLibraryHere();
        }
    }

    /**
     * Opens the store at {@code url}.
     *
     * @param defaults options used where the URL's query string says nothing
     * @throws ConfigException for an unknown scheme or a malformed URL or option
     */
    public static LeaseStore open(String url, StoreOptions defaults) {
        int q = url.indexOf('?');
        String base = q < 0 ? url : url.substring(0, q);
        boolean sentinel = base.startsWith("redis-sentinel://");
        StoreOptions options = q < 0
                ? defaults
                : parseQuery(url.substring(q + 1), defaults, sentinel)
                        .withSingleConnection(defaults.singleConnection());
        if (defaults.callerClock()) {
            options = options.withCallerClock();
        }
        if (base.startsWith("sqlite:")) {
            return SqliteLeaseStore.open(sqlitePath(base), options);
        }
        if (base.startsWith("redis://") || base.startsWith("rediss://")) {
            return RedisLeaseStore.open(base, options);
        }
        if (sentinel) {
            // The whole URL: its query string also holds the sentinels' credentials.
            return RedisLeaseStore.open(url, options);
        }
        if (base.startsWith("postgresql://") || base.startsWith("postgres://")) {
            return PostgresLeaseStore.open(base, options);
        }
        throw unknownScheme(base);
    }

    private static ConfigException unknownScheme(String base) {
        String scheme = base.contains(":") ? base.substring(0, base.indexOf(':')) : base;
        return new ConfigException("unknown store scheme '" + scheme + "': use sqlite:<path>, redis://host:port[/db],"
                + " rediss://host:port[/db], redis-sentinel://host:port[,host:port…]/master-name[/db] or"
                + " postgresql://user@host:port/database");
    }

    /**
     * Reads how the store at {@code url} is set up, for judging its safety ({@code fence doctor}, {@code fence
     * serve}'s start). Creates nothing: a SQLite file that does not exist is described, not made, and a
     * PostgreSQL database's settings are read without fence's schema.
     *
     * @param defaults options used where the URL's query string says nothing (its timeout bounds the read)
     * @throws ConfigException for an unknown scheme, a malformed URL or refused credentials
     * @throws dev.fence.core.StoreUnavailableException when a server cannot be reached
     */
    public static StoreSetup inspect(String url, StoreOptions defaults) {
        int q = url.indexOf('?');
        String base = q < 0 ? url : url.substring(0, q);
        boolean sentinel = base.startsWith("redis-sentinel://");
        StoreOptions options = q < 0 ? defaults : parseQuery(url.substring(q + 1), defaults, sentinel);
        if (base.startsWith("sqlite:")) {
            Path file = sqlitePath(base);
            return new StoreSetup.Sqlite("sqlite:" + file, file);
        }
        if (base.startsWith("redis://") || base.startsWith("rediss://") || sentinel) {
            return RedisSetups.read(url, options);
        }
        if (base.startsWith("postgresql://") || base.startsWith("postgres://")) {
            // Pooled, which connects on first use: a single connection would connect now, through the schema.
            try (PostgresLeaseStore store = PostgresLeaseStore.open(base, options.withSingleConnection(false))) {
                return store.setup();
            }
        }
        throw unknownScheme(base);
    }

    private static Path sqlitePath(String base) {
        String path = base.substring("sqlite:".length());
        if (path.startsWith("//")) {
            path = path.substring(2);
        }
        if (path.isEmpty()) {
            throw new ConfigException("store URL 'sqlite:' needs a file path, e.g. sqlite:/var/lib/fence/fence.db");
        }
        return Path.of(path).toAbsolutePath();
    }

    private static StoreOptions parseQuery(String query, StoreOptions o, boolean sentinel) {
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            if (sentinel && (key.equals("sentinelUser") || key.equals("sentinelPassword"))) {
                continue; // read by the Sentinel URL itself
            }
            try {
                o = switch (key) {
                    case "timeout" -> new StoreOptions(
                            Durations.parsePositive("timeout", value),
                            o.retention(),
                            o.waitReplicas(),
                            o.waitTimeout(),
                            o.singleConnection(),
                            o.callerClock(),
                            o.retentionAsked());
                    case "retention" -> o.withRetentionAsked(Durations.parsePositive("retention", value));
                    case "wait" -> new StoreOptions(
                            o.timeout(),
                            o.retention(),
                            parseCount(value),
                            o.waitTimeout(),
                            o.singleConnection(),
                            o.callerClock(),
                            o.retentionAsked());
                    case "waitTimeout" -> new StoreOptions(
                            o.timeout(),
                            o.retention(),
                            o.waitReplicas(),
                            Durations.parsePositive("waitTimeout", value),
                            o.singleConnection(),
                            o.callerClock(),
                            o.retentionAsked());
                    default -> throw new ConfigException("store URL: unknown option '" + key
                            + "' (known: timeout, retention, wait, waitTimeout"
                            + (sentinel ? ", sentinelUser, sentinelPassword)" : ")"));
                };
            } catch (InvalidInputException e) {
                throw new ConfigException("store URL: " + e.getMessage());
            }
        }
        return o;
    }

    private static int parseCount(String value) {
        try {
            int n = Integer.parseInt(value);
            if (n >= 0 && n <= 16) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the message below
        }
        throw new ConfigException("store URL: wait must be a number of replicas from 0 to 16; got '" + value + "'");
    }
}
