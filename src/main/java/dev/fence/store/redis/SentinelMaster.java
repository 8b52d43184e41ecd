package dev.fence.store.redis;

import dev.fence.core.ConfigException;
import dev.fence.core.StoreUnavailableException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * The master of a Redis Sentinel set-up ({@link SentinelUrl}), as its sentinels name it, and the rule for
 * following it through a failover.
 *
 * <p><b>Finding the master.</b> The sentinels are asked {@code SENTINEL get-master-addr-by-name} in turn,
 * starting with the one that answered last; the first address named wins (as Sentinel's client guidelines
 * and Jedis's own Sentinel pool do). The question goes over a connection as the store makes them ({@link
 * RedisConnections}).
 *
 * <p><b>Following a failover.</b> {@link #follow} runs a store call; when it fails because the master is
 * gone (a connection failure) or no longer a master (a {@code READONLY} or {@code MASTERDOWN} reply from a
 * demoted one), the sentinels are asked again. A different master: the store drops its connections and
 * the call runs again there. The same one: the call runs again after a short pause while the sentinels
 * may still be electing, until the store's timeout has passed since the call began; a timeout is not
 * waited out twice (only a new master is tried after one). A call that failed at the connection may have
 * run on the old master before it went; running it again is what the store's own stale-connection retry
 * already allows (see {@link RedisLeaseStore}). A call refused with {@code READONLY} did not run.
 *
 * <p>What a failover cannot keep (writes the old master acknowledged and never passed on) is the
 * generation's business: the new master is a different server, so the store's scripts start a new
 * generation there before they grant again.
 *
 * <p>Thread-safe: the known master is swapped atomically, and concurrent failures ask the sentinels once
 * per master that failed them.
 */
final class SentinelMaster {
    /** The pause before a call runs again on a master the sentinels still name. */
    private static final long PAUSE_MILLIS = 100;

    private final SentinelUrl url;
    private final int timeoutMillis;
    private final Object asking = new Object();

    /** The master the sentinels named last; null until first asked. */
    private volatile RedisUrl master;

    /** The index of the sentinel that answered last: asked first next time. */
    private volatile int first;

    /**
     * @param timeoutMillis the store's timeout: for each sentinel's connection and reply, and the most a
     *     call goes on retrying
     */
    SentinelMaster(SentinelUrl url, int timeoutMillis) {
        this.url = url;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * The master the sentinels named last, asking them on first use.
     *
     * @throws StoreUnavailableException when no sentinel could be asked
     * @throws ConfigException when the sentinels refuse fence's credentials or do not know the master
     */
    RedisUrl current() {
        RedisUrl m = master;
        return m != null ? m : askAfter(null);
    }

    /**
     * Runs {@code call}, following a failover as the class describes.
     *
     * @param onSwitch run when the sentinels name a new master, before the call runs again: drops every
     *     connection to the old one
     */
    <T> T follow(Supplier<T> call, Runnable onSwitch) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            StoreUnavailableException failure;
            try {
                return call.get();
            } catch (StoreUnavailableException e) {
                failure = e;
            }
            Failure kind = classify(failure);
            if (kind == Failure.OTHER || System.nanoTime() - deadline > 0) {
                throw failure;
            }
            // The master the call went to (or, if another thread has just switched, the one it switched to,
            // which it has dropped the old connections for).
            RedisUrl used = master;
            if (used == null) {
                throw failure;
            }
            RedisUrl now;
            try {
                now = askAfter(used);
            } catch (RuntimeException e) {
                e.addSuppressed(failure);
                throw e;
            }
            if (!sameAddress(now, used)) {
                onSwitch.run();
                continue;
            }
            if (kind == Failure.TIMEOUT) {
                // The master the sentinels still name took the whole timeout to fail: trying it again would
                // only wait twice.
                throw failure;
            }
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw failure;
            }
            try {
                Thread.sleep(Math.min(PAUSE_MILLIS, left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure;
            }
        }
    }

    /** The Sentinel URL, passwords masked. */
    String describe() {
        return url.describe();
    }

    private enum Failure {
        /** The master refused the connection, dropped it, or is no longer a master. */
        GONE,
        /** The master did not answer in time. */
        TIMEOUT,
        /** Anything else: not a failover's doing. */
        OTHER
    }

    private static Failure classify(StoreUnavailableException e) {
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
            if (c instanceof SocketTimeoutException) {
                return Failure.TIMEOUT;
            }
        }
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
            if (c instanceof JedisDataException data) {
                String m = data.getMessage() == null ? "" : data.getMessage();
                return m.startsWith("READONLY") || m.startsWith("MASTERDOWN") ? Failure.GONE : Failure.OTHER;
            }
            if (c instanceof JedisConnectionException) {
                return Failure.GONE;
            }
        }
        return Failure.OTHER;
    }

    private static boolean sameAddress(RedisUrl a, RedisUrl b) {
        return a.host().equals(b.host()) && a.port() == b.port();
    }

    /**
     * Asks the sentinels for the master, unless another thread has done so since {@code seen} was the
     * known master (null: none was): its answer is as fresh.
     */
    private RedisUrl askAfter(RedisUrl seen) {
        synchronized (asking) {
            RedisUrl m = master;
            if (m != null && m != seen) {
                return m;
            }
            m = ask();
            master = m;
            return m;
        }
    }

    private RedisUrl ask() {
        List<RedisUrl> sentinels = url.sentinels();
        List<String> problems = new ArrayList<>();
        boolean reached = false;
        boolean unknown = false;
        boolean refused = false;
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        int start = first;
        for (int i = 0; i < sentinels.size(); i++) {
            if (i > 0 && System.nanoTime() - deadline > 0) {
                problems.add("no time left to ask the others");
                break;
            }
            int index = (start + i) % sentinels.size();
            RedisUrl sentinel = sentinels.get(index);
            List<?> reply;
            Connection c = null;
            try {
                c = RedisConnections.open(sentinel, timeoutMillis, RedisConnections.CLIENT_NAME);
                Object r = RedisConnections.call(
                        c, Protocol.Command.SENTINEL, List.of("get-master-addr-by-name", url.masterName()));
                reached = true;
                if (!(r instanceof List<?> l) || l.size() < 2) {
                    unknown = true;
                    problems.add(sentinel.address() + ": monitors no master named '" + url.masterName() + "'");
                    continue;
                }
                reply = l;
            } catch (JedisAccessControlException e) {
                reached = true;
                refused = true;
                problems.add(sentinel.address() + ": refused fence's credentials (" + scrub(e.getMessage()) + ")");
                continue;
            } catch (JedisDataException e) {
                reached = true;
                unknown = true;
                problems.add(sentinel.address() + ": " + scrub(e.getMessage()));
                continue;
            } catch (JedisException e) {
                problems.add(sentinel.address() + ": " + scrub(e.getMessage()));
                continue;
            } finally {
                if (c != null) {
                    try {
                        c.close();
                    } catch (RuntimeException e) {
                        // best effort
                    }
                }
            }
            int port;
            try {
                port = Integer.parseInt(String.valueOf(reply.get(1)));
            } catch (NumberFormatException e) {
                problems.add(sentinel.address() + ": named the master at a port that is not a number");
                continue;
            }
            first = index;
            return url.master(String.valueOf(reply.get(0)), port);
        }
        String where = "Redis Sentinel " + url.addresses() + " (master '" + url.masterName() + "')";
        String detail = String.join("; ", problems);
        if (refused) {
            throw new ConfigException(where + ": a sentinel refused fence's credentials: " + detail
                    + ". The sentinels get the URL's own credentials unless it says ?sentinelPassword=… (an empty"
                    + " value: none) and ?sentinelUser=…");
        }
        if (reached && unknown) {
            throw new ConfigException(where + ": no sentinel named the master: " + detail
                    + ". Check the master name in the store URL against the sentinels' 'sentinel monitor' lines");
        }
        throw new StoreUnavailableException(where + ": no sentinel could be asked for the master: " + detail);
    }

    /** Messages come from the sentinels; none should hold a password, but none ever may. */
    private String scrub(String message) {
        String m = message == null ? "" : message;
        for (String secret : secrets()) {
            m = m.replace(secret, "***");
        }
        return m;
    }

    private List<String> secrets() {
        List<String> out = new ArrayList<>();
        if (url.password() != null && !url.password().isEmpty()) {
            out.add(url.password());
        }
        for (RedisUrl s : url.sentinels()) {
            if (s.password() != null && !s.password().isEmpty() && !out.contains(s.password())) {
                out.add(s.password());
            }
        }
        return out;
    }
}
