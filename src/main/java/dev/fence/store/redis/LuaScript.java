package dev.fence.store.redis;

import dev.fence.core.InternalException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import redis.clients.jedis.CommandObject;
import redis.clients.jedis.CommandObjects;
import redis.clients.jedis.Connection;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * One server-side script: {@code lib.lua} followed by {@code <name>.lua}, from this package's classpath
 * resources. Runs with {@code EVALSHA} under the script's SHA-1, which the build knows (a test checks
 * each one against its resources), so a call reads nothing from the jar: a hook process that never
 * opens its jar skips parsing the jar's directory of thousands of entries. A server that does not know
 * the script (first use, restart, {@code SCRIPT FLUSH}) gets it with {@code SCRIPT LOAD}, read then, and
 * the call is retried once. {@code NOSCRIPT} means nothing ran, so the retry cannot apply anything twice.
 *
 * <p>Immutable and thread-safe.
 */
final class LuaScript {
    private static final String LIB = "lib";
    /** Jedis's command builders, made on first use: a hook's plain connection never needs them. */
    private static final class Jedis {
        static final CommandObjects COMMANDS = new CommandObjects(RedisProtocol.RESP2);

        private Jedis() {}
    }

    private final String name;
    private final String sha1;
    private volatile String source;

    private LuaScript(String name, String sha1) {
        this.name = name;
        this.sha1 = sha1;
    }

    /**
     * Script {@code name} (without {@code .lua}) with the shared helpers, whose text is read only when a
     * server asks for it.
     *
     * @param sha1 the SHA-1 (lower-case hex) of {@code lib.lua}, a newline and {@code <name>.lua}: what
     *     Redis names the script by
     * @throws InternalException (when the text is first read) when a resource is missing from the build
     */
    static LuaScript of(String name, String sha1) {
        return new LuaScript(name, sha1);
    }

    String name() {
        return name;
    }

    String source() {
        String s = source;
        if (s == null) {
            s = read(LIB) + "\n" + read(name);
            source = s;
        }
        return s;
    }

    String sha1() {
        return sha1;
    }

    /**
     * Runs the script on {@code connection}. Replies are decoded as by Jedis: bulk strings to {@code
     * String}, integers to {@code Long}, arrays to {@code List}, nil to null.
     */
    Object eval(Connection connection, List<String> keys, List<String> args) {
        return eval(connection, keys, args, false);
    }

    /**
     * As {@link #eval(Connection, List, List)}; on a connection that served calls before ({@code
     * reused}), a connection failure is a {@link StaleConnection}.
     */
    Object eval(Connection connection, List<String> keys, List<String> args, boolean reused) {
        String sha1 = sha1();
        CommandObject<Object> command = Jedis.COMMANDS.evalsha(sha1, keys, args);
        try {
            try {
                return connection.executeCommand(command);
            } catch (JedisConnectionException e) {
                throw reused ? new StaleConnection(e) : e;
            }
        } catch (JedisNoScriptException e) {
            String loaded = connection.executeCommand(Jedis.COMMANDS.scriptLoad(source()));
            if (!sha1.equals(loaded)) {
                throw new InternalException(
                        "Redis loaded script " + name + " as " + loaded + " but fence computed " + sha1);
            }
            return connection.executeCommand(Jedis.COMMANDS.evalsha(sha1, keys, args));
        }
    }

    /** As {@link #eval(Connection, List, List, boolean)}, on a plain or pipelined connection. */
    Object eval(RespCalls connection, List<String> keys, List<String> args, boolean reused) {
        List<String> command = new java.util.ArrayList<>(3 + keys.size() + args.size());
        command.add("EVALSHA");
        command.add(sha1());
        command.add(Integer.toString(keys.size()));
        command.addAll(keys);
        command.addAll(args);
        try {
            try {
                return connection.call(command);
            } catch (JedisConnectionException e) {
                throw reused ? new StaleConnection(e) : e;
            }
        } catch (JedisNoScriptException e) {
            Object loaded = connection.call(List.of("SCRIPT", "LOAD", source()));
            if (!sha1().equals(loaded)) {
                throw new InternalException(
                        "Redis loaded script " + name + " as " + loaded + " but fence computed " + sha1());
            }
            return connection.call(command);
        }
    }

    /**
     * The first command on a connection that served calls before failed at the connection: it had most
     * likely gone stale (the server restarted, or closed it, since it was last used).
     */
    static final class StaleConnection extends JedisConnectionException {
        private static final long serialVersionUID = 1L;

        StaleConnection(JedisConnectionException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private static String read(String name) {
        String resource = name + ".lua";
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new InternalException("script resource " + resource + " is missing from the fence build");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new InternalException("cannot read script resource " + resource, e);
        }
    }
}
