package dev.fence.store.redis;

import dev.fence.core.InternalException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import redis.clients.jedis.CommandObjects;
import redis.clients.jedis.Connection;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * One server-side script: {@code lib.lua} followed by {@code <name>.lua}, both read once from this
 * package's classpath resources. Runs with {@code EVALSHA}; a server that does not know the script
 * (first use, restart, {@code SCRIPT FLUSH}) gets it with {@code SCRIPT LOAD} and the call is retried
 * once. {@code NOSCRIPT} means nothing ran, so the retry cannot apply anything twice.
 *
 * <p>Immutable and thread-safe.
 */
final class LuaScript {
    private static final String LIB = "lib";
    private static final CommandObjects COMMANDS = new CommandObjects(RedisProtocol.RESP2);

    private final String name;
    private final String source;
    private final String sha1;

    private LuaScript(String name, String source) {
        this.name = name;
        this.source = source;
        this.sha1 = sha1Hex(source);
    }

    /**
     * Loads script {@code name} (without {@code .lua}) with the shared helpers.
     *
     * @throws InternalException when a resource is missing from the build
     */
    static LuaScript load(String name) {
        return new LuaScript(name, read(LIB) + "\n" + read(name));
    }

    String name() {
        return name;
    }

    String source() {
        return source;
    }

    String sha1() {
        return sha1;
    }

    /**
     * Runs the script on {@code connection}. Replies are decoded as by Jedis: bulk strings to {@code
     * String}, integers to {@code Long}, arrays to {@code List}, nil to null.
     */
    Object eval(Connection connection, List<String> keys, List<String> args) {
        try {
            return connection.executeCommand(COMMANDS.evalsha(sha1, keys, args));
        } catch (JedisNoScriptException e) {
            String loaded = connection.executeCommand(COMMANDS.scriptLoad(source));
            if (!sha1.equals(loaded)) {
                throw new InternalException(
                        "Redis loaded script " + name + " as " + loaded + " but fence computed " + sha1);
            }
            return connection.executeCommand(COMMANDS.evalsha(sha1, keys, args));
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

    private static String sha1Hex(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new InternalException("SHA-1 is not available in this JVM", e);
        }
    }
}
