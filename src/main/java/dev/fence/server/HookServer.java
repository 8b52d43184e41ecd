package dev.fence.server;

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
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;

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
 * <p>Connections are Jetty's: a few I/O threads read and write every connection without blocking, so a
 * slow or idle client costs a connection slot and a buffer, never a thread. A request's headers must
 * arrive within {@link ServerSettings#requestTimeout()} ({@link ConnectionWatch}), and so must its body,
 * which is read before a handler runs ({@link BodyReader}); a connection passing no bytes for {@link
 * ServerSettings#idleTimeout()} is closed; at most {@link ServerSettings#maxConnections()} are open at
 * once. Routing, authentication and {@code /healthz} run on the I/O threads; handlers run on a bounded
 * pool ({@link ServerSettings#threads()} threads, {@link ServerSettings#queue()} waiting; past it the
 * answer is 503), and store work on bounded pools of its own (one for verdicts, one for everything else,
 * so that no other call can crowd verdicts out) with the store timeout, so a hung store costs a request
 * at most that long. {@link #close()} stops taking new requests (they are answered 503), waits
 * up to the grace period for requests in flight, then closes the listener, the connections and the store.
 */
public final class HookServer implements AutoCloseable {
    /** Jetty's own threads: the acceptor, the selector and the non-blocking work they hand on. */
    private static final int IO_THREADS = 8;

    private final ServerSettings settings;
    private final Server jetty;
    private final ServerConnector connector;
    private final ConnectionWatch watch;
    private final ThreadPoolExecutor requestPool;
    private final ThreadPoolExecutor storePool;
    /**
     * Pre-receive verdicts' store work, apart from {@link #storePool}: lease and ledger calls (an
     * auditor's long query, say) cannot fill it, and make verdicts store-down, however many there are.
     */
    private final ThreadPoolExecutor verdictPool;

    private final LeaseStore store;
    private final Credentials credentials;
    private final ServerMetrics metrics = new ServerMetrics();
    private final Consumer<String> log;
    private final List<Route> routes = new ArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();

    /** Queue-wait timers set and neither fired nor cancelled (see {@code Exchange#dispatch}). */
    private final AtomicInteger shedTimers = new AtomicInteger();

    private final Object stopLock = new Object();
    private final StoreCalls calls;
    private final Clock clock;
    private volatile boolean stopping;
    /** The last store problem /readyz logged, so that a probe every second logs it once. */
    private volatile String lastReadyProblem;

    private boolean closing;
    private boolean stopped;

    /** A handler of one route. */
    @FunctionalInterface
    private interface Handler {
        Reply handle(Call call);
    }

    /**
     * A route: exact path, method, the roles that may call it (empty: no credential needed), whether it is
     * answered on the I/O thread (only what neither blocks nor reads a body), and whether browsers call it
     * (a 401 then asks for HTTP Basic, so the browser prompts for the credential's name and secret).
     */
    private record Route(
            String method, String path, Set<Role> roles, boolean inline, boolean browser, Handler handler) {}

    private HookServer(
            ServerSettings settings, LeaseStore store, Credentials credentials, Clock clock, Consumer<String> log) {
        this.settings = settings;
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
        this.verdictPool = new ThreadPoolExecutor(
                settings.threads() * 2,
                settings.threads() * 2,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(settings.threads() * 4),
                daemon("fence-verdict-"),
                new ThreadPoolExecutor.AbortPolicy());
        this.calls = new StoreCalls(storePool, settings.storeTimeout(), metrics);

        QueuedThreadPool io = new QueuedThreadPool(IO_THREADS, 2, 60_000);
        io.setName("fence-io");
        io.setDaemon(true);
        this.jetty = new Server(io);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        this.connector = new ServerConnector(jetty, 1, 1, new HttpConnectionFactory(http));
        connector.setHost(settings.listen().getAddress().getHostAddress());
        connector.setPort(settings.listen().getPort());
        connector.setAcceptQueueSize(128);
        connector.setIdleTimeout(settings.idleTimeout().toMillis());
        this.watch = new ConnectionWatch(jetty.getScheduler(), settings.requestTimeout());
        connector.addEventListener(watch);
        jetty.addConnector(connector);
        jetty.addBean(new NetworkConnectionLimit(settings.maxConnections(), connector));
        jetty.setErrorHandler(new ErrorReplies());
        jetty.setRequestLog(new AccessLog(log));
        jetty.setHandler(new Entry());
    }

    /**
     * Opens the store, reads the credentials, binds and starts serving.
     *
     * @param openStore opens the store URL (the composition root picks implementations and options)
     * @param log where the server writes its operational lines (never secrets)
     * @throws ConfigException for an unreadable credentials file or a bad store URL
     * @throws ConfigException when the address cannot be bound (in use, not this host's, a privileged port):
     *     the operator's to fix, not a bug in fence
     */
    public static HookServer start(
            ServerSettings settings, Function<String, LeaseStore> openStore, Clock clock, Consumer<String> log) {
        Credentials credentials = new Credentials(settings.credentials(), log);
        LeaseStore store = openStore.apply(settings.storeUrl());
        HookServer server = new HookServer(settings, store, credentials, clock, log);
        server.wire();
        try {
            server.jetty.start();
            server.watch.start();
        } catch (Exception e) {
            server.stopQuietly();
            store.close();
            if (e instanceof IOException io) {
                Throwable cause = io.getCause() != null ? io.getCause() : io;
                throw new ConfigException(
                        "cannot listen on " + settings.listen().getHostString() + ":"
                                + settings.listen().getPort() + ": " + cause.getMessage()
                                + " (another process holds the port, or the address is not this host's); choose"
                                + " another address or stop what listens there",
                        io);
            }
            throw new IllegalStateException("fence serve could not start: " + e, e);
        }
        // Not "listening on": the caller says where it listens, once (fence serve prints it on stdout).
        log.accept("serving store " + store.describe() + " with " + credentials.size() + " credentials and "
                + settings.threads() + " threads");
        return server;
    }

    private void wire() {
        SharedStore shared = new SharedStore(store);
        Function<String, LeaseStore> sharedOpener = url -> shared;
        PreReceiveHook pre = new PreReceiveHook(sharedOpener, clock, verdictPool);
        PostReceiveHook post = new PostReceiveHook(sharedOpener, clock);
        HookApi hooks = new HookApi(pre, post, settings.hook(), settings.storeUrl(), calls, metrics);
        LeaseApi leases = new LeaseApi(LeaseService.forAuthenticatedHolders(shared, clock), calls, metrics, clock);
        AuditApi audit = new AuditApi(shared, calls, clock, metrics, settings.commitUrl());
        Set<Role> none = Set.of();
        inline("GET", "/healthz", c -> Reply.json(200, Map.of("status", "ok")));
        route("GET", "/readyz", none, this::ready);
        inline("GET", "/metrics", c -> metrics.scrape());
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
        routes.add(new Route("GET", "/audit", EnumSet.of(Role.AUDITOR), false, true, audit::page));
    }

    private void route(String method, String path, Set<Role> roles, Handler handler) {
        routes.add(new Route(method, path, roles, false, false, handler));
    }

    private void inline(String method, String path, Handler handler) {
        routes.add(new Route(method, path, Set.of(), true, false, handler));
    }

    /** The address the server listens on (the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return new InetSocketAddress(settings.listen().getAddress(), connector.getLocalPort());
    }

    /**
     * Queue-wait timers still set: one per request waiting for a thread, none once every request has been
     * taken or answered.
     */
    int shedTimersPending() {
        return shedTimers.get();
    }

    /** Request threads running a request now (a snapshot): what a test of the queue waits for. */
    int requestThreadsBusy() {
        return requestPool.getActiveCount();
    }

    /** Pre-receive verdicts this server has answered since it started. */
    public long verdictsAnswered() {
        return metrics.preReceiveVerdicts();
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
            lastReadyProblem = null;
            m.put("status", "ready");
            m.put("generation", id.generation());
            return Reply.json(200, m);
        } catch (StoreUnavailableException | ConfigException e) {
            // The caller is not authenticated: the store's address and its error stay in the server's log.
            String detail = e.getMessage();
            if (!detail.equals(lastReadyProblem)) {
                log.accept("readyz: the store is unavailable: " + detail);
            }
            lastReadyProblem = detail;
            return Reply.json(
                    503,
                    Map.of("status", "unavailable", "message", "the store is unavailable (the server's log says why)"));
        }
    }

    /** Jetty's entry point: runs on an I/O thread, so it never blocks. */
    private final class Entry extends org.eclipse.jetty.server.Handler.Abstract.NonBlocking {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            Exchange x = new Exchange(request, response, callback);
            try {
                x.begin();
            } catch (RuntimeException e) {
                x.fail(e);
            }
            return true;
        }
    }

    /** One request from its headers to the last byte of its answer. */
    private final class Exchange {
        private final Request request;
        private final Response response;
        private final Callback callback;
        private final Connection connection;
        private final Call call;
        private final long start = System.nanoTime();
        private final AtomicBoolean answered = new AtomicBoolean();
        /** Set by whichever takes the request first: a pool thread to run it, or {@link #shed}. */
        private final AtomicBoolean started = new AtomicBoolean();

        private String routeName = "unmatched";
        private boolean browser;
        /** The request's body has been read whole (set before the handler is handed to the pool). */
        private volatile boolean bodyRead;

        /** The {@link #shed} timer, while one is set. */
        private volatile Scheduler.Task shedding;

        Exchange(Request request, Response response, Callback callback) {
            this.request = request;
            this.response = response;
            this.callback = callback;
            this.connection = request.getConnectionMetaData().getConnection();
            this.call = new Call(request);
            inFlight.incrementAndGet();
            watch.handling(connection);
        }

        /** Routes and authenticates at once; reads the body, then hands the handler to the pool. */
        void begin() {
            if (stopping) {
                answer(Reply.error(503, "the server is shutting down", call.wantsText()));
                return;
            }
            Route route;
            try {
                route = match(call.path(), call.method());
                routeName = route.path();
                browser = route.browser();
                authenticate(route);
            } catch (HttpError e) {
                answer(Reply.error(e.status(), e.getMessage(), call.wantsText()));
                return;
            }
            if (route.inline()) {
                answer(invoke(route));
                return;
            }
            if (!call.method().equals("POST")) {
                dispatch(route);
                return;
            }
            BodyReader.read(
                    request,
                    settings.maxBodyBytes(),
                    settings.requestTimeout(),
                    request.getComponents().getScheduler(),
                    body -> {
                        if (body.error() != null) {
                            // Answered with its body unread: answer() closes the connection (a late body's 408
                            // included).
                            answer(Reply.error(
                                    body.error().status(), body.error().getMessage(), call.wantsText()));
                            return;
                        }
                        call.body(body.bytes());
                        bodyRead = true;
                        dispatch(route);
                    });
        }

        /**
         * Hands the handler to the request pool. A request still waiting there half the store timeout after
         * it was complete is answered 503 at once and never runs, so that under overload every request gets
         * a quick answer (a hook's shim fails closed on it, REJECTED store-down) and a hook verdict that
         * does run still has half the store timeout for the store ({@link Call#waitedNanos}). The time a
         * client takes to upload its request is not counted: how large a push is or how slowly it arrives
         * must not shorten the store's time for its verdict.
         */
        private void dispatch(Route route) {
            long ready = System.nanoTime();
            call.ready(ready);
            Runnable run = () -> {
                if (started.compareAndSet(false, true)) {
                    cancelShedding();
                    answer(invoke(route));
                }
            };
            try {
                requestPool.execute(run);
            } catch (RejectedExecutionException e) {
                answer(Reply.error(
                        503, "the server has too many requests waiting; try again shortly", call.wantsText()));
                return;
            }
            if (!requestPool.getQueue().isEmpty()) {
                long left = maxQueueWaitNanos() - (System.nanoTime() - ready);
                // Counted before it is set: a timer due at once may fire, and count itself off, first.
                shedTimers.incrementAndGet();
                shedding = request.getComponents()
                        .getScheduler()
                        .schedule(() -> shed(run), Math.max(0, left), TimeUnit.NANOSECONDS);
                if (started.get()) {
                    // A thread took it before the timer was set.
                    cancelShedding();
                }
            }
        }

        /**
         * Cancels the {@link #shed} timer of a request a thread has taken. Left to fire, each would hold
         * its whole request (body, form, answer) for half the store timeout: at thousands of verdicts a
         * second, tens of megabytes that every young collection copied.
         */
        private void cancelShedding() {
            Scheduler.Task timer = shedding;
            if (timer != null && timer.cancel()) {
                shedTimers.decrementAndGet();
            }
        }

        /** The queue-wait bound of {@link #dispatch}: answers a request no thread has taken yet. */
        private void shed(Runnable queued) {
            shedTimers.decrementAndGet();
            if (started.compareAndSet(false, true)) {
                // Its place in the queue goes to a request that can still be answered in time.
                requestPool.remove(queued);
                metrics.shed();
                answer(Reply.error(
                        503,
                        "the server is overloaded: the request waited " + maxQueueWaitNanos() / 1_000_000
                                + " ms for a thread; try again shortly",
                        call.wantsText()));
            }
        }

        private void authenticate(Route route) {
            if (route.roles().isEmpty()) {
                return;
            }
            if (call.headerCount("Authorization") > 1) {
                // Which one counts would be a guess, and a proxy in between may pick the other.
                throw HttpError.badRequest("the request carries more than one Authorization header");
            }
            Credential c;
            try {
                c = credentials.authenticate(call.header("Authorization"), route.browser());
            } catch (HttpError e) {
                if (e.status() == 401) {
                    metrics.authFailure(401);
                }
                throw e;
            }
            // Named in the access line also when its role does not fit: the name is no secret.
            request.setAttribute(AccessLog.CALLER, c.name());
            if (!c.hasRole(route.roles())) {
                metrics.authFailure(403);
                throw HttpError.forbidden("credential '" + c.name() + "' has role "
                        + c.role().label() + "; " + route.path() + " needs " + roleNames(route.roles()));
            }
            call.caller(c);
        }

        private Reply invoke(Route route) {
            try {
                return route.handler().handle(call);
            } catch (HttpError e) {
                return Reply.error(e.status(), e.getMessage(), call.wantsText());
            } catch (InvalidInputException e) {
                return Reply.error(400, e.getMessage(), call.wantsText());
            } catch (StoreUnavailableException | ConfigException e) {
                return Reply.error(503, "the store is unavailable: " + e.getMessage(), call.wantsText());
            } catch (RuntimeException e) {
                log.accept("internal error on " + call.method() + " " + route.path() + ": " + e);
                return Reply.error(500, "internal error", call.wantsText());
            }
        }

        void fail(RuntimeException e) {
            log.accept("internal error on " + call.method() + " " + routeName + ": " + e);
            answer(Reply.error(500, "internal error", call.wantsText()));
        }

        /** Sends {@code reply}; the first call wins. */
        void answer(Reply reply) {
            if (!answered.compareAndSet(false, true)) {
                return;
            }
            if (reply.status() == 404 || reply.status() == 405) {
                routeName = "unmatched";
            }
            response.setStatus(reply.status());
            var h = response.getHeaders();
            h.put(HttpHeader.CONTENT_TYPE, reply.contentType());
            h.put(HttpHeader.CACHE_CONTROL, "no-store");
            reply.headers().forEach(h::put);
            if (!bodyRead && hasBody(request)) {
                // Answered before its body was read (a refused credential, an unknown path, a body too
                // large): Jetty then closes the connection rather than read a body no one wants. Said in
                // the reply, so that a client does not send its next request on a connection about to
                // close, where it would get no answer at all.
                h.put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE);
            }
            if (reply.status() == 401) {
                h.put(
                        HttpHeader.WWW_AUTHENTICATE,
                        browser ? "Basic realm=\"fence\", charset=\"UTF-8\"" : "Bearer realm=\"fence\"");
            }
            if (reply.contentType().startsWith("text/html")) {
                h.put("Content-Security-Policy", dev.fence.audit.TimelinePage.contentSecurityPolicy());
                h.put("X-Content-Type-Options", "nosniff");
                h.put("Referrer-Policy", "no-referrer");
            }
            byte[] body = reply.body();
            h.put(HttpHeader.CONTENT_LENGTH, body.length);
            response.write(true, ByteBuffer.wrap(body), new Callback() {
                @Override
                public void succeeded() {
                    done(reply.status());
                    callback.succeeded();
                }

                @Override
                public void failed(Throwable x) {
                    // The client went away; nothing to tell it.
                    done(reply.status());
                    callback.failed(x);
                }
            });
        }

        private static boolean hasBody(Request request) {
            HttpFields headers = request.getHeaders();
            return headers.getLongField(HttpHeader.CONTENT_LENGTH) > 0
                    || headers.contains(HttpHeader.TRANSFER_ENCODING);
        }

        private void done(int status) {
            watch.answered(connection);
            metrics.request(routeName, call.method(), status, System.nanoTime() - start);
            if (inFlight.decrementAndGet() == 0 && stopping) {
                synchronized (stopLock) {
                    stopLock.notifyAll();
                }
            }
        }
    }

    /** How long a request may wait for a thread: half the store timeout (see Exchange#dispatch). */
    private long maxQueueWaitNanos() {
        return settings.storeTimeout().toNanos() / 2;
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

    private static String roleNames(Set<Role> roles) {
        List<String> names = new ArrayList<>();
        roles.forEach(r -> names.add(r.label()));
        names.add("admin");
        return String.join(" or ", names);
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
            if (closing) {
                awaitStopped();
                return;
            }
            closing = true;
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
        }
        // Not under stopLock: Jetty's stop waits for its I/O threads, which may be finishing an answer and
        // take the lock to say so.
        stopQuietly();
        requestPool.shutdownNow();
        storePool.shutdownNow();
        verdictPool.shutdownNow();
        store.close();
        synchronized (stopLock) {
            stopped = true;
            stopLock.notifyAll();
        }
        log.accept("fence serve stopped");
    }

    private void awaitStopped() {
        try {
            while (!stopped) {
                stopLock.wait();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void stopQuietly() {
        watch.stop();
        try {
            jetty.stop();
        } catch (Exception e) {
            log.accept("stopping the HTTP server: " + e);
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

    /** For tests: connections open now. */
    int connections() {
        return watch.size();
    }
}
