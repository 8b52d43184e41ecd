package dev.fence.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.fence.core.ConfigException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.StoreIdentity;
import dev.fence.core.StoreUnavailableException;
import dev.fence.hook.PostReceiveHook;
import dev.fence.hook.PreReceiveHook;
import dev.fence.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The {@code fence serve} HTTP server: routes, authentication, limits, metrics and a graceful stop.
 *
 * <p>Canonical usage:
 *
 * <pre>{@code
 * try (HookServer server = HookServer.start(settings, openStore, Clock.systemUTC(), log)) {
 *     server.awaitStop();
 * }
 * }</pre>
 *
 * <p>Requests run on a bounded pool ({@link ServerSettings#threads()} threads, {@link
 * ServerSettings#queue()} waiting); store work runs on a second bounded pool with the store timeout, so
 * a hung store costs a request at most that long. {@link #close()} stops taking new requests (they are
 * answered 503), waits up to the grace period for requests in flight, then closes the listener, the
 * connections and the store.
 */
public final class HookServer implements AutoCloseable {
    private static final String MAX_REQ_TIME = "sun.net.httpserver.maxReqTime";
    private static final String MAX_RSP_TIME = "sun.net.httpserver.maxRspTime";

    private final ServerSettings settings;
    private final HttpServer http;
    private final ThreadPoolExecutor requestPool;
    private final ThreadPoolExecutor storePool;
    private final LeaseStore store;
    private final Credentials credentials;
    private final ServerMetrics metrics = new ServerMetrics();
    private final Consumer<String> log;
    private final List<Route> routes = new ArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Object stopLock = new Object();
    private final StoreCalls calls;
    private final Clock clock;
    private volatile boolean stopping;
    private boolean stopped;

    /** A handler of one route. */
    @FunctionalInterface
    private interface Handler {
        Reply handle(Call call);
    }

    /** A route: exact path, method, the roles that may call it (empty: no credential needed). */
    private record Route(String method, String path, Set<Role> roles, Handler handler) {}

    private HookServer(
            ServerSettings settings,
            HttpServer http,
            LeaseStore store,
            Credentials credentials,
            Clock clock,
            Consumer<String> log) {
        this.settings = settings;
        this.http = http;
        this.store = store;
        this.credentials = credentials;
        this.clock = clock;
        this.log = log;
        this.requestPool = new ThreadPoolExecutor(
                settings.threads(),
                settings.threads(),
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(settings.queue()),
                daemon("fence-http-"),
                new ThreadPoolExecutor.AbortPolicy());
        this.storePool = new ThreadPoolExecutor(
                settings.threads() * 2,
                settings.threads() * 2,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(settings.threads() * 4),
                daemon("fence-store-"),
                new ThreadPoolExecutor.AbortPolicy());
        this.calls = new StoreCalls(storePool, settings.storeTimeout(), metrics);
    }

    /**
     * Opens the store, reads the credentials, binds and starts serving.
     *
     * @param openStore opens the store URL (the composition root picks implementations and options)
     * @param log where the server writes its operational lines (never secrets)
     * @throws ConfigException for an unreadable credentials file or a bad store URL
     * @throws UncheckedIOException when the address cannot be bound
     */
    public static HookServer start(
            ServerSettings settings, Function<String, LeaseStore> openStore, Clock clock, Consumer<String> log) {
        // The JDK server reads these once, when its first instance is made; they bound how long a client
        // may take to send a request and to read the response (slow-loris protection).
        String seconds = Long.toString(Math.max(1, settings.requestTimeout().toSeconds()));
        if (System.getProperty(MAX_REQ_TIME) == null) {
            System.setProperty(MAX_REQ_TIME, seconds);
        }
        if (System.getProperty(MAX_RSP_TIME) == null) {
            System.setProperty(MAX_RSP_TIME, seconds);
        }
        Credentials credentials = new Credentials(settings.credentials(), log);
        LeaseStore store = openStore.apply(settings.storeUrl());
        HttpServer http;
        try {
            http = HttpServer.create(settings.listen(), 128);
        } catch (IOException e) {
            store.close();
            throw new UncheckedIOException("cannot listen on " + settings.listen() + ": " + e.getMessage(), e);
        }
        HookServer server = new HookServer(settings, http, store, credentials, clock, log);
        server.wire();
        http.setExecutor(server.requestPool);
        http.createContext("/", server::dispatch);
        http.start();
        log.accept("fence serve listening on " + server.uri() + " (store " + store.describe() + ", "
                + credentials.size() + " credentials, " + settings.threads() + " threads)");
        return server;
    }

    private void wire() {
        SharedStore shared = new SharedStore(store);
        Function<String, LeaseStore> sharedOpener = url -> shared;
        PreReceiveHook pre = new PreReceiveHook(sharedOpener, clock, storePool);
        PostReceiveHook post = new PostReceiveHook(sharedOpener, clock);
        HookApi hooks = new HookApi(pre, post, settings.hook(), settings.storeUrl(), calls, metrics);
        LeaseApi leases = new LeaseApi(new LeaseService(shared, clock), calls, metrics, clock);
        AuditApi audit = new AuditApi(shared, calls, clock, metrics);
        Set<Role> none = Set.of();
        route("GET", "/healthz", none, c -> Reply.json(200, Map.of("status", "ok")));
        route("GET", "/readyz", none, this::ready);
        route("GET", "/metrics", none, c -> metrics.scrape());
        route("POST", "/v1/leases/acquire", EnumSet.of(Role.AGENT), leases::acquire);
        route("POST", "/v1/leases/renew", EnumSet.of(Role.AGENT), leases::renew);
        route("POST", "/v1/leases/release", EnumSet.of(Role.AGENT), leases::release);
        route("GET", "/v1/leases/status", EnumSet.of(Role.AGENT, Role.AUDITOR), leases::status);
        route("POST", "/v1/leases/proof", EnumSet.of(Role.AGENT), leases::proof);
        route("POST", "/v1/leases/move-sha", EnumSet.of(Role.AGENT), leases::moveSha);
        route("GET", "/v1/leases/grants", EnumSet.of(Role.AGENT, Role.AUDITOR), audit::grants);
        route("POST", "/v1/hook/pre-receive", EnumSet.of(Role.HOOK), hooks::preReceive);
        route("POST", "/v1/hook/post-receive", EnumSet.of(Role.HOOK), hooks::postReceive);
        route("GET", "/v1/audit", EnumSet.of(Role.AUDITOR), audit::query);
        route("GET", "/v1/audit/timeline", EnumSet.of(Role.AUDITOR), audit::timeline);
    }

    private void route(String method, String path, Set<Role> roles, Handler handler) {
        routes.add(new Route(method, path, roles, handler));
    }

    /** The address the server listens on (the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return http.getAddress();
    }

    /** {@code http://host:port}. */
    public URI uri() {
        InetSocketAddress a = address();
        String host = a.getAddress().getHostAddress();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        return URI.create("http://" + host + ":" + a.getPort());
    }

    private Reply ready(Call call) {
        String problem = credentials.problem();
        if (problem != null) {
            return Reply.json(503, Map.of("status", "unavailable", "message", "credentials file is invalid"));
        }
        try {
            StoreIdentity id =
                    calls.call("readyz", () -> store.identity(dev.fence.core.Identities.candidate(clock.instant())));
            Map<String, Object> m = Json.object();
            m.put("status", "ready");
            m.put("generation", id.generation());
            return Reply.json(200, m);
        } catch (StoreUnavailableException | ConfigException e) {
            return Reply.json(503, Map.of("status", "unavailable", "message", e.getMessage()));
        }
    }

    private void dispatch(HttpExchange exchange) {
        long start = System.nanoTime();
        inFlight.incrementAndGet();
        String routeName = "unmatched";
        Call call = new Call(exchange, settings.maxBodyBytes());
        Reply reply;
        try {
            if (stopping) {
                reply = Reply.error(503, "the server is shutting down", call.wantsText());
            } else {
                Route route = match(exchange.getRequestURI().getRawPath(), exchange.getRequestMethod());
                routeName = route.path();
                reply = invoke(route, call);
            }
        } catch (HttpError e) {
            if (e.status() == 404 || e.status() == 405) {
                routeName = "unmatched";
            }
            reply = Reply.error(e.status(), e.getMessage(), call.wantsText());
        } catch (RuntimeException e) {
            reply = Reply.error(500, "internal error", call.wantsText());
            log.accept("internal error on " + exchange.getRequestMethod() + " "
                    + exchange.getRequestURI().getRawPath() + ": " + e);
        }
        try {
            send(exchange, reply);
        } finally {
            exchange.close();
            metrics.request(routeName, exchange.getRequestMethod(), reply.status(), System.nanoTime() - start);
            if (inFlight.decrementAndGet() == 0 && stopping) {
                synchronized (stopLock) {
                    stopLock.notifyAll();
                }
            }
        }
    }

    private Route match(String path, String method) {
        List<String> allowed = new ArrayList<>();
        for (Route r : routes) {
            if (r.path().equals(path)) {
                if (r.method().equals(method)) {
                    return r;
                }
                allowed.add(r.method());
            }
        }
        if (allowed.isEmpty()) {
            throw new HttpError(404, "no such endpoint: " + path + " (see docs/api.md)");
        }
        throw new HttpError(405, "use " + String.join(" or ", allowed) + " for " + path);
    }

    private Reply invoke(Route route, Call call) {
        if (!route.roles().isEmpty()) {
            Credential c;
            try {
                c = credentials.authenticate(call.header("Authorization"));
            } catch (HttpError e) {
                if (e.status() == 401) {
                    metrics.authFailure(401);
                }
                throw e;
            }
            if (!c.hasRole(route.roles())) {
                metrics.authFailure(403);
                throw HttpError.forbidden("credential '" + c.name() + "' has role "
                        + c.role().label() + "; " + route.path() + " needs " + roleNames(route.roles()));
            }
            call.caller(c);
        }
        try {
            return route.handler().handle(call);
        } catch (InvalidInputException e) {
            return Reply.error(400, e.getMessage(), call.wantsText());
        } catch (StoreUnavailableException | ConfigException e) {
            return Reply.error(503, "the store is unavailable: " + e.getMessage(), call.wantsText());
        } catch (UncheckedIOException e) {
            return Reply.error(
                    400, "the request could not be read: " + e.getCause().getMessage(), call.wantsText());
        }
    }

    private static String roleNames(Set<Role> roles) {
        List<String> names = new ArrayList<>();
        roles.forEach(r -> names.add(r.label()));
        names.add("admin");
        return String.join(" or ", names);
    }

    private static void send(HttpExchange exchange, Reply reply) {
        try {
            exchange.getResponseHeaders().set("Content-Type", reply.contentType());
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
            if (reply.status() == 401) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"fence\"");
            }
            byte[] body = reply.body();
            exchange.sendResponseHeaders(reply.status(), body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        } catch (IOException e) {
            // The client went away; nothing to tell it.
        }
    }

    /** Blocks until {@link #close()} has run (from another thread, e.g. a shutdown hook). */
    public void awaitStop() throws InterruptedException {
        synchronized (stopLock) {
            while (!stopped) {
                stopLock.wait();
            }
        }
    }

    /**
     * Stops gracefully: new requests are answered 503, requests in flight get up to the grace period,
     * then the listener, connections, pools and store are closed. Idempotent.
     */
    @Override
    public void close() {
        synchronized (stopLock) {
            if (stopped) {
                return;
            }
            stopping = true;
            long deadline = System.nanoTime() + settings.grace().toNanos();
            try {
                while (inFlight.get() > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        log.accept("grace period over with " + inFlight.get() + " requests in flight; closing them");
                        break;
                    }
                    stopLock.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 50)));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            http.stop(0);
            requestPool.shutdownNow();
            storePool.shutdownNow();
            store.close();
            stopped = true;
            stopLock.notifyAll();
            log.accept("fence serve stopped");
        }
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** For tests: how long stops wait. */
    Duration grace() {
        return settings.grace();
    }
}
