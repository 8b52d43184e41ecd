package dev.fence.store.redis;

import dev.fence.core.ConfigException;
import dev.fence.core.StoreUnavailableException;
import dev.fence.store.StoreOptions;
import dev.fence.store.StoreSetup;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Reads a Redis server's set-up ({@link StoreSetup.Redis}): {@code INFO} and the {@code CONFIG GET}
 * values fence's safety depends on, over one short-lived connection. A value the server refuses (an ACL
 * without {@code CONFIG}, a renamed command on a managed Redis) is left out, not an error.
 */
public final class RedisSetups {
    /** The configuration parameters read, in this order. */
    static final List<String> PARAMETERS =
            List.of("maxmemory-policy", "appendonly", "appendfsync", "save", "min-replicas-to-write");

    private RedisSetups() {}

    /**
     * Reads the set-up of the server {@code url} names: {@code redis://}, {@code rediss://}, or {@code
     * redis-sentinel://} (the master its sentinels name), query string allowed.
     *
     * @throws StoreUnavailableException when the server (or every sentinel) cannot be reached
     * @throws ConfigException for a malformed URL or refused credentials
     */
    public static StoreSetup.Redis read(String url, StoreOptions options) {
        int timeout =
                (int) Math.max(1, Math.min(Integer.MAX_VALUE, options.timeout().toMillis()));
        RedisUrl server;
        String describe;
        boolean viaSentinel = SentinelUrl.matches(url);
        if (viaSentinel) {
            SentinelMaster sentinel = new SentinelMaster(SentinelUrl.parse(url), timeout);
            server = sentinel.current();
            describe = sentinel.describe();
        } else {
            int q = url.indexOf('?');
            server = RedisUrl.parse(q < 0 ? url : url.substring(0, q));
            describe = server.describe();
        }
        Connection c = null;
        try {
            c = RedisConnections.open(server, timeout, "fence-doctor");
            Map<String, String> info = new LinkedHashMap<>();
            try {
                info = parseInfo(String.valueOf(RedisConnections.call(c, Protocol.Command.INFO, List.of())));
            } catch (JedisDataException e) {
                refusedCredentials(e);
                // INFO refused: judged as unknown
            }
            Map<String, String> config = new LinkedHashMap<>();
            for (String parameter : PARAMETERS) {
                try {
                    Object reply = RedisConnections.call(c, Protocol.Command.CONFIG, List.of("GET", parameter));
                    if (reply instanceof List<?> pair && pair.size() >= 2) {
                        config.put(parameter, String.valueOf(pair.get(1)));
                    }
                } catch (JedisDataException e) {
                    refusedCredentials(e);
                    // CONFIG refused or renamed: judged as unknown
                }
            }
            return new StoreSetup.Redis(describe, server.address(), viaSentinel, info, config);
        } catch (JedisAccessControlException e) {
            // Refused at login (AUTH, in the handshake), or rethrown by refusedCredentials.
            throw new ConfigException("Redis at " + server.address() + " refused fence's credentials; check the user"
                    + " and password in the store URL");
        } catch (JedisException e) {
            throw new StoreUnavailableException(
                    "Redis at " + server.address() + " is unavailable: " + scrub(e.getMessage(), server.password()), e);
        } finally {
            if (c != null) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    // best effort
                }
            }
        }
    }

    /**
     * Rethrows a refusal that is about who fence is (not logged in, wrong password), not about the one
     * command (NOPERM: an ACL without it).
     */
    private static void refusedCredentials(JedisDataException e) {
        String m = e.getMessage() == null ? "" : e.getMessage();
        if (m.startsWith("NOAUTH") || m.startsWith("WRONGPASS")) {
            throw e;
        }
    }

    /** {@code INFO}'s {@code field:value} lines. */
    static Map<String, String> parseInfo(String info) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                out.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return out;
    }

    private static String scrub(String message, String password) {
        String m = message == null ? "" : message;
        return password == null || password.isEmpty() ? m : m.replace(password, "***");
    }
}
