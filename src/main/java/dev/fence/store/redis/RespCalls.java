package dev.fence.store.redis;

import java.util.List;

/**
 * Something that sends one Redis command and returns its reply, decoded as {@link RespConnection}
 * decodes it; failures are Jedis's exception types ({@code JedisConnectionException} at the connection,
 * {@code JedisDataException} for an error reply).
 */
interface RespCalls {
    /** Sends {@code command} (its name, then its arguments) and waits for its reply. */
    Object call(List<String> command);
}
