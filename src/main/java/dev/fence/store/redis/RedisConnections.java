package dev.fence.store.redis;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.apache.commons.pool2.PooledObject;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionFactory;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.SafeEncoder;

/**
 * Jedis connections to the server a {@link RedisUrl} names: fence's one Redis client, for a hook's single
 * connection, a long-running process's pool and the sentinels alike. Each connects directly (never
 * through a SOCKS proxy from the JVM's settings: a store is reached as its URL says, and the proxy
 * machinery costs a hook's fresh JVM milliseconds), with TLS and host name verification against the JVM's
 * trust store for {@code rediss://}, then logs in (AUTH, then SELECT and the client name in one round
 * trip; a refusal closes the connection before any command is sent). Jedis's {@code CLIENT SETINFO} is
 * not sent: fence names itself. Pooled connections log in through Jedis's own handshake, to the same
 * effect.
 *
 * <p>Failures are Jedis's: {@link JedisConnectionException} at the connection, {@link
 * redis.clients.jedis.exceptions.JedisDataException} and its subclasses for an error reply. {@link
 * RedisLeaseStore} turns them into fence's own.
 */
final class RedisConnections {
    static final String CLIENT_NAME = "fence";

    /**
     * A long-running process's most connections at once, and as many kept idle: as many as fence serve's
     * verdict store threads (twice its default 32 handler threads), so that a verdict never waits for a
     * connection while Redis has time to answer it.
     */
    private static final int POOL_SIZE = 64;

    private RedisConnections() {}

    /**
     * Begins, on a daemon thread of its own, the class set-up a one-shot hook's first connection would
     * otherwise do on its store thread, in its critical path: the JDK's socket implementation (on JDK 17
     * its class initialisation links the process's first lambda, milliseconds in a fresh JVM), and Jedis's
     * command table. It connects to nothing: a socket is created and closed unconnected. A failure here is
     * ignored; the connection meets it again and reports it. Bench: "Java hook, Redis" rows.
     */
    static void preload() {
        Preload p = new Preload();
        preloading = p;
        p.start();
    }

    /** The thread of {@link #preload()} until a connection has waited for it; null when there is none. */
    private static volatile Thread preloading;

    /**
     * Waits, at most {@code timeoutMillis}, for {@link #preload()}'s thread: a connection made meanwhile would
     * link the JDK socket's lambdas a second time, concurrently, and the loser of that race spins its lambda
     * class at run time instead of taking the archived one (a millisecond or more of a JDK 17 hook).
     */
    private static void awaitPreload(int timeoutMillis) {
        Thread p = preloading;
        if (p != null) {
            try {
                p.join(timeoutMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            preloading = null;
        }
    }

    /** The thread of {@link #preload()}. */
    private static final class Preload extends Thread {
        Preload() {
            super("fence-redis-preload");
            setDaemon(true);
        }

        @Override
        public void run() {
            try (Socket s = new Socket(Proxy.NO_PROXY)) {
                // Creates the socket (not connected): what DirectSockets#createSocket sets up first.
                s.setTcpNoDelay(true);
            } catch (IOException | RuntimeException e) {
                // The hook's own connection meets it, and reports it.
            }
            // Jedis's command table and argument encoding, which the log-in's first command sets up.
            new CommandArguments(Protocol.Command.CLIENT).add("SETNAME").add(CLIENT_NAME);
            // The store's first AtomicReference looks up its VarHandle (0.4 ms interpreted on JDK 17).
            new java.util.concurrent.atomic.AtomicReference<Object>();
        }
    }

    /**
     * One connection, connected and logged in; {@code timeoutMillis} bounds the connect and each reply.
     * The log-in is sent here rather than by Jedis's own handshake, which first reads Jedis's version from
     * its jar (for {@code CLIENT SETINFO}): a hook that opens its jar pays for reading the jar's directory.
     *
     * @throws redis.clients.jedis.exceptions.JedisException when the server cannot be reached or refuses
     */
    static Connection open(RedisUrl url, int timeoutMillis, String clientName) {
        awaitPreload(timeoutMillis);
        Connection c = new Connection(new DirectSockets(url, timeoutMillis));
        try {
            c.connect();
            if (url.password() != null) {
                // Answered before anything else is sent: a command queued behind a refused AUTH would still run.
                call(
                        c,
                        Protocol.Command.AUTH,
                        url.user() == null ? List.of(url.password()) : List.of(url.user(), url.password()));
            }
            List<CommandArguments> rest = new ArrayList<>(2);
            if (url.database() != 0) {
                rest.add(new CommandArguments(Protocol.Command.SELECT).add(url.database()));
            }
            rest.add(
                    new CommandArguments(Protocol.Command.CLIENT).add("SETNAME").add(clientName));
            for (CommandArguments command : rest) {
                c.sendCommand(command);
            }
            for (Object reply : c.getMany(rest.size())) {
                if (reply instanceof JedisDataException refused) {
                    throw refused;
                }
            }
            return c;
        } catch (RuntimeException e) {
            try {
                c.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /**
     * A pool of connections as {@link #open} makes them, which makes none until asked. {@code used}: a
     * set the caller adds the connections to that served it; a connection the pool destroys leaves it.
     */
    static ConnectionPool pool(RedisUrl url, int timeoutMillis, Set<Connection> used) {
        ConnectionPoolConfig config = new ConnectionPoolConfig();
        config.setMaxTotal(POOL_SIZE);
        // As many idle as in use: a smaller cap closes connections that busy callers hand back only to open
        // new ones for the next call (a connect and a handshake each time at 32 callers).
        config.setMaxIdle(POOL_SIZE);
        config.setMinIdle(0);
        config.setMaxWait(Duration.ofMillis(timeoutMillis));
        config.setBlockWhenExhausted(true);
        // The store replaces stale pooled connections itself, bounding a dead server's cost to one timeout.
        config.setTestOnBorrow(false);
        config.setJmxEnabled(false);
        ConnectionFactory factory =
                new ConnectionFactory(new DirectSockets(url, timeoutMillis), config(url, timeoutMillis, CLIENT_NAME)) {
                    @Override
                    public void destroyObject(PooledObject<Connection> p) throws Exception {
                        used.remove(p.getObject());
                        super.destroyObject(p);
                    }
                };
        return new ConnectionPool(factory, config);
    }

    /**
     * Sends {@code command} with {@code args} and returns the reply decoded as fence's scripts' replies are
     * read: bulk and simple strings as {@code String}, integers as {@code Long}, arrays as {@code List}, nil
     * as null.
     */
    static Object call(Connection c, Protocol.Command command, List<String> args) {
        CommandArguments arguments = new CommandArguments(command);
        for (String arg : args) {
            arguments.add(arg);
        }
        return SafeEncoder.encodeObject(c.executeCommand(arguments));
    }

    private static JedisClientConfig config(RedisUrl url, int timeoutMillis, String clientName) {
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(timeoutMillis)
                .socketTimeoutMillis(timeoutMillis)
                .database(url.database())
                .clientName(clientName)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
        if (url.user() != null) {
            config.user(url.user());
        }
        if (url.password() != null) {
            config.password(url.password());
        }
        return config.build();
    }

    /** Sockets straight to the server, TLS for {@code rediss://}; the read timeout is the connect timeout. */
    private static final class DirectSockets implements JedisSocketFactory {
        private final RedisUrl url;
        private final int timeoutMillis;

        DirectSockets(RedisUrl url, int timeoutMillis) {
            this.url = url;
            this.timeoutMillis = timeoutMillis;
        }

        @Override
        public Socket createSocket() {
            Socket socket = new Socket(Proxy.NO_PROXY);
            try {
                socket.setTcpNoDelay(true);
                socket.connect(new InetSocketAddress(url.host(), url.port()), timeoutMillis);
                socket.setSoTimeout(timeoutMillis);
                if (url.tls()) {
                    SSLSocket tls = (SSLSocket) ((SSLSocketFactory) SSLSocketFactory.getDefault())
                            .createSocket(socket, url.host(), url.port(), true);
                    SSLParameters p = tls.getSSLParameters();
                    p.setEndpointIdentificationAlgorithm("HTTPS");
                    tls.setSSLParameters(p);
                    tls.startHandshake();
                    socket = tls;
                }
                return socket;
            } catch (IOException | RuntimeException e) {
                try {
                    socket.close();
                } catch (IOException closing) {
                    e.addSuppressed(closing);
                }
                throw new JedisConnectionException(
                        "Failed to connect to " + url.address() + ": " + (e.getMessage() == null ? e : e.getMessage()),
                        e);
            }
        }

        @Override
        public String toString() {
            return url.address();
        }
    }
}
