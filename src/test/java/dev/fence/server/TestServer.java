package dev.fence.server;

import dev.fence.hook.HookConfig;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

/**
 * An in-process {@code fence serve} on a free loopback port, with its own credentials file and hook
 * configuration, and a small HTTP client for raw requests. Every line the server logs is kept, so tests
 * can check that no secret ever reaches it.
 */
final class TestServer implements AutoCloseable {
    final Path dir;
    final Path credentials;
    final Path config;
    final String storeUrl;
    final List<String> log = new CopyOnWriteArrayList<>();
    private final Duration storeTimeout;
    private final UnaryOperator<ServerSettings> adjust;
    private HookServer server;

    private TestServer(Path dir, String storeUrl, Duration storeTimeout, UnaryOperator<ServerSettings> adjust) {
        this.dir = dir;
        this.credentials = dir.resolve("credentials");
        this.config = dir.resolve("fence.conf");
        this.storeUrl = storeUrl;
        this.storeTimeout = storeTimeout;
        this.adjust = adjust;
    }

    /** Starts a server on {@code storeUrl}; {@code configText} is its hook configuration (fence.conf). */
    static TestServer start(Path dir, String storeUrl, String configText) {
        return start(dir, storeUrl, configText, Duration.ofSeconds(2));
    }

    static TestServer start(Path dir, String storeUrl, String configText, Duration storeTimeout) {
        return start(dir, storeUrl, configText, storeTimeout, UnaryOperator.identity());
    }

    /** As {@link #start(Path, String, String)}, with the server's settings changed by {@code adjust}. */
    static TestServer start(Path dir, String storeUrl, String configText, UnaryOperator<ServerSettings> adjust) {
        return start(dir, storeUrl, configText, Duration.ofSeconds(2), adjust);
    }

    /** As {@link #start(Path, String, String, Duration)}, with the settings changed by {@code adjust}. */
    static TestServer start(
            Path dir, String storeUrl, String configText, Duration storeTimeout, UnaryOperator<ServerSettings> adjust) {
        try {
            Files.createDirectories(dir);
            TestServer t = new TestServer(dir, storeUrl, storeTimeout, adjust);
            Files.writeString(t.config, configText);
            if (!Files.exists(t.credentials)) {
                Files.writeString(t.credentials, "");
            }
            t.launch();
            return t;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void launch() {
        HookConfig hook = HookConfig.load(null, config, null);
        ServerSettings s = new ServerSettings(
                new InetSocketAddress("127.0.0.1", 0),
                storeUrl,
                credentials,
                hook,
                8,
                64,
                ServerSettings.DEFAULT_MAX_BODY,
                Duration.ofSeconds(5),
                ServerSettings.DEFAULT_REQUEST_TIMEOUT);
        StoreOptions options = new StoreOptions(
                storeTimeout,
                StoreOptions.defaults().retention(),
                0,
                StoreOptions.defaults().waitTimeout());
        server = HookServer.start(adjust.apply(s), u -> Stores.open(u, options), Clock.systemUTC(), log::add);
    }

    /** Stops the server and starts a new one on the same store, credentials and configuration (new port). */
    void restart() {
        server.close();
        launch();
    }

    HookServer server() {
        return server;
    }

    /**
     * Returns once {@code n} requests hold request threads: what a test that stops the server or fills its
     * queue behind them waits for, rather than a sleep a busy machine could end too soon.
     *
     * @throws IllegalStateException when they do not within 30 s
     */
    void awaitRequestThreadsBusy(int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (server.requestThreadsBusy() < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("fewer than " + n + " requests reached a request thread in 30 s");
            }
            Thread.sleep(5);
        }
    }

    String url() {
        return server.uri().toString();
    }

    /** Adds a credential; returns its bearer token. */
    String add(String name, Role role, String... holders) {
        return CredentialsFile.add(credentials, name, role, List.of(holders), new SecureRandom());
    }

    void revoke(String name) {
        CredentialsFile.revoke(credentials, name);
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }

    /** An HTTP answer. */
    record Response(int status, String body, String contentType, java.net.http.HttpHeaders headers) {
        /** The first value of header {@code name}, or null. */
        String header(String name) {
            return headers.firstValue(name).orElse(null);
        }
    }

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    Response get(String path, String bearer, String accept) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url() + path)).timeout(Duration.ofSeconds(20));
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        if (accept != null) {
            b.header("Accept", accept);
        }
        return send(b.GET().build());
    }

    Response post(String path, String bearer, String contentType, String body) {
        return post(path, bearer, contentType, body, null);
    }

    Response post(String path, String bearer, String contentType, String body, String accept) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url() + path))
                .timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        if (accept != null) {
            b.header("Accept", accept);
        }
        return send(b.build());
    }

    static Response send(HttpRequest request) {
        try {
            HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            return new Response(
                    r.statusCode(),
                    r.body(),
                    r.headers().firstValue("Content-Type").orElse(""),
                    r.headers());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
