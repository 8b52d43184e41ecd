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
 * @param requestTimeout the longest a client may take to send a request (headers and body); past it the
 *     connection is closed. It is a JVM-wide setting of the JDK's HTTP server, fixed by the first
 *     server started in the process.
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
        Duration requestTimeout) {

    /** 4 MiB: a push of 10,000 refs is about 1.2 MB of stdin. */
    public static final int DEFAULT_MAX_BODY = 4 * 1024 * 1024;

    public static final int DEFAULT_THREADS = 16;

    public static final int DEFAULT_QUEUE = 256;

    public static final Duration DEFAULT_GRACE = Duration.ofSeconds(10);

    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

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
