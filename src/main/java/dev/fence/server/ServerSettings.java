package dev.fence.server;

import dev.fence.hook.HookConfig;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;

/**
 * How {@code fence serve} runs.
 *
 * @param listen the address to bind (port 0: any free port)
 * @param storeUrl the store's URL (never shown in messages)
 * @param credentials the credentials file ({@link CredentialsFile})
 * @param hook the hook configuration the server judges pushes under (fenced refs, pusher policies, agent
 *     patterns, on-store-down, store-timeout); requests cannot change it
 * @param threads request threads (the bounded pool)
 * @param queue requests waiting for a thread; past it, connections are closed at once
 * @param maxBodyBytes the longest request body; longer ones get 413
 * @param grace how long a stop waits for requests in flight
 * @param requestTimeout the longest a client may take to send a request's headers (counted from the
 *     connection's opening for its first request) and, separately, its body; past it the connection is
 *     closed (a late body is answered 408 first)
 * @param idleTimeout how long a connection may pass no bytes either way (a kept-alive connection waiting
 *     for its next request, a client that stopped reading its answer) before it is closed
 * @param maxConnections the most connections open at once; past it the server accepts no more until one
 *     closes (they wait in the listen backlog)
 * @param commitUrl the {@code /audit} page's commit link template ({@link
 *     dev.fence.audit.TimelinePage#commitUrl}), or null for no links
 */
public record ServerSettings(
        InetSocketAddress listen,
        String storeUrl,
        Path credentials,
        HookConfig hook,
        int threads,
        int queue,
        int maxBodyBytes,
        Duration grace,
        Duration requestTimeout,
        Duration idleTimeout,
        int maxConnections,
        String commitUrl) {

    /** 4 MiB: a push of 10,000 refs is about 1.2 MB of stdin. */
    public static final int DEFAULT_MAX_BODY = 4 * 1024 * 1024;

    /**
     * A handler thread is held for a verdict's two store round trips, so the pool caps verdicts at threads
     * divided by their latency: 16 threads held fence serve on Redis near 4,000 verdicts/s at 64 hooks on two
     * cores with CPU to spare; 32 reach the CPU first (see the scale bench in README).
     */
    public static final int DEFAULT_THREADS = 32;

    public static final int DEFAULT_QUEUE = 256;

    public static final Duration DEFAULT_GRACE = Duration.ofSeconds(10);

    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

    /** Far above what hooks and agents open (one connection per shim request), far below a process's files. */
    public static final int DEFAULT_MAX_CONNECTIONS = 1000;

    /** Settings with the default idle timeout and connection limit. */
    public ServerSettings(
            InetSocketAddress listen,
            String storeUrl,
            Path credentials,
            HookConfig hook,
            int threads,
            int queue,
            int maxBodyBytes,
            Duration grace,
            Duration requestTimeout) {
        this(
                listen,
                storeUrl,
                credentials,
                hook,
                threads,
                queue,
                maxBodyBytes,
                grace,
                requestTimeout,
                DEFAULT_IDLE_TIMEOUT,
                DEFAULT_MAX_CONNECTIONS,
                null);
    }

    /** These settings with other connection limits (for operators and tests). */
    public ServerSettings withConnectionLimits(Duration requestTimeout, Duration idleTimeout, int maxConnections) {
        return new ServerSettings(
                listen,
                storeUrl,
                credentials,
                hook,
                threads,
                queue,
                maxBodyBytes,
                grace,
                requestTimeout,
                idleTimeout,
                maxConnections,
                commitUrl);
    }

    /** These settings with the {@code /audit} page linking commits through {@code template} (null: none). */
    public ServerSettings withCommitUrl(String template) {
        return new ServerSettings(
                listen,
                storeUrl,
                credentials,
                hook,
                threads,
                queue,
                maxBodyBytes,
                grace,
                requestTimeout,
                idleTimeout,
                maxConnections,
                template);
    }

    /** Settings with the defaults for everything but the essentials. */
    public static ServerSettings of(InetSocketAddress listen, String storeUrl, Path credentials, HookConfig hook) {
        return new ServerSettings(
                listen,
                storeUrl,
                credentials,
                hook,
                DEFAULT_THREADS,
                DEFAULT_QUEUE,
                DEFAULT_MAX_BODY,
                DEFAULT_GRACE,
                DEFAULT_REQUEST_TIMEOUT);
    }

    /** The store timeout: {@code store-timeout} of the hook configuration. */
    public Duration storeTimeout() {
        return hook.policy().storeTimeout();
    }
}
