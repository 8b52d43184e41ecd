package dev.fence.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A real headless Chromium, driven over the DevTools protocol (a WebSocket, JSON by Jackson): no
 * browser-automation library. Each {@link Tab} records what a test asserts on: console errors, uncaught
 * exceptions, every request the page makes, and the HTTP status of each answer. HTTP authentication
 * challenges are answered with the tab's credentials, or cancelled without them, as a user would.
 *
 * <p>Started with a fresh profile directory and Chromium's background networking, sync and component
 * updates turned off, so the only requests are the pages'.
 */
public final class Chromium implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final Map<String, Tab> tabs = new ConcurrentHashMap<>();

    private Chromium(Process process, Path profile, URI endpoint) {
        this.process = process;
        this.profile = profile;
        this.socket = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .buildAsync(endpoint, new Listener())
                .join();
    }

    /** The browser binary: {@code $CHROMIUM}, else the first of the usual names on the PATH; empty if none. */
    public static Optional<Path> binary() {
        String given = System.getenv("CHROMIUM");
        if (given != null && !given.isBlank()) {
            return Optional.of(Path.of(given));
        }
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String name : List.of("chromium", "chromium-browser", "google-chrome", "headless_shell")) {
            for (String dir : path.split(":")) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return Optional.empty();
    }

    /** Starts {@code binary} headless on a free loopback DevTools port. */
    public static Chromium launch(Path binary) {
        try {
            Path profile = Files.createTempDirectory("fence-chromium-");
            List<String> cmd = List.of(
                    binary.toString(),
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--no-default-browser-check",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-extensions",
                    "--disable-features=Translate,MediaRouter,OptimizationHints",
                    "--remote-debugging-address=127.0.0.1",
                    "--remote-debugging-port=0",
                    "--user-data-dir=" + profile,
                    "about:blank");
            Process p = new ProcessBuilder(cmd)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            CompletableFuture<URI> endpoint = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader err =
                        new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                    StringBuilder seen = new StringBuilder();
                    for (String line; (line = err.readLine()) != null; ) {
                        int at = line.indexOf("DevTools listening on ");
                        if (at >= 0) {
                            endpoint.complete(URI.create(line.substring(at + 22).strip()));
                        } else if (!endpoint.isDone()) {
                            seen.append(line).append('\n');
                        }
                    }
                    endpoint.completeExceptionally(new IllegalStateException("chromium exited: " + seen));
                } catch (IOException e) {
                    endpoint.completeExceptionally(e);
                }
            });
            reader.setDaemon(true);
            reader.start();
            try {
                return new Chromium(p, profile, endpoint.get(30, TimeUnit.SECONDS));
            } catch (ExecutionException | TimeoutException e) {
                p.destroyForcibly();
                throw new IllegalStateException("chromium did not start: " + e.getMessage(), e);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * A new tab on {@code about:blank} in a browser context of its own (its own cookies and HTTP auth
     * cache, like a fresh private window); {@code user}/{@code password} answer HTTP auth challenges (null:
     * cancel).
     */
    public Tab open(String user, String password) {
        String context = call(null, "Target.createBrowserContext", obj())
                .get("browserContextId")
                .asText();
        String target = call(
                        null,
                        "Target.createTarget",
                        obj().put("url", "about:blank").put("browserContextId", context))
                .get("targetId")
                .asText();
        String session = call(
                        null,
                        "Target.attachToTarget",
                        obj().put("targetId", target).put("flatten", true))
                .get("sessionId")
                .asText();
        Tab tab = new Tab(session, user, password);
        tabs.put(session, tab);
        tab.send("Runtime.enable", obj());
        tab.send("Log.enable", obj());
        tab.send("Network.enable", obj());
        tab.send("Page.enable", obj());
        ObjectNode fetch = obj().put("handleAuthRequests", true);
        fetch.putArray("patterns").addObject().put("urlPattern", "*");
        tab.send("Fetch.enable", fetch);
        return tab;
    }

    static ObjectNode obj() {
        return JSON.createObjectNode();
    }

    private JsonNode call(String session, String method, ObjectNode params) {
        long id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        ObjectNode msg = obj().put("id", id).put("method", method);
        msg.set("params", params);
        if (session != null) {
            msg.put("sessionId", session);
        }
        post(msg);
        try {
            JsonNode r = answer.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (r.has("error")) {
                throw new IllegalStateException(method + ": " + r.get("error"));
            }
            return r.get("result");
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(method + " got no answer: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            pending.remove(id);
        }
    }

    /** One message at a time: the WebSocket refuses a send while the previous one is unfinished. */
    private synchronized void post(ObjectNode msg) {
        socket.sendText(msg.toString(), true).join();
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder part = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            part.append(data);
            if (last) {
                String text = part.toString();
                part.setLength(0);
                try {
                    dispatch(JSON.readTree(text));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            ws.request(1);
            return null;
        }
    }

    private void dispatch(JsonNode msg) {
        if (msg.has("id")) {
            CompletableFuture<JsonNode> f = pending.get(msg.get("id").asLong());
            if (f != null) {
                f.complete(msg);
            }
            return;
        }
        Tab tab = msg.has("sessionId") ? tabs.get(msg.get("sessionId").asText()) : null;
        if (tab != null) {
            tab.event(msg.get("method").asText(), msg.get("params"));
        }
    }

    @Override
    public void close() {
        try {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "").get(2, TimeUnit.SECONDS);
        } catch (Exception e) {
            // The browser goes below either way.
        }
        // Chromium's helpers (zygote, network service) outlive the browser process by a moment and go on
        // writing into the profile; they are stopped and waited for too, or deleting the profile races them.
        List<ProcessHandle> helpers = process.descendants().toList();
        process.destroy();
        helpers.forEach(ProcessHandle::destroy);
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
            for (ProcessHandle h : helpers) {
                try {
                    h.onExit().get(5, TimeUnit.SECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    h.destroyForcibly();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        deleteProfile();
    }

    /** Deletes the profile directory; a file that vanishes while it is walked is no failure. */
    private void deleteProfile() {
        for (int attempt = 0; attempt < 3 && Files.exists(profile); attempt++) {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException | UncheckedIOException e) {
                // Something wrote or removed a file under the walk; walk again.
            }
        }
    }

    /** One tab (a page session) and what it saw. */
    public final class Tab {
        private final String session;
        private final String user;
        private final String password;
        private final List<JsonNode> events = new ArrayList<>();
        /** Every URL the page asked for (requests, including navigations and redirects). */
        public final List<String> requests = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** Console errors, uncaught exceptions and error log entries (CSP violations among them). */
        public final List<String> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** The HTTP status of each answer, by URL, in order. */
        public final List<String> statuses = new java.util.concurrent.CopyOnWriteArrayList<>();

        private Tab(String session, String user, String password) {
            this.session = session;
            this.user = user;
            this.password = password;
        }

        public JsonNode send(String method, ObjectNode params) {
            return call(session, method, params);
        }

        private void event(String method, JsonNode params) {
            switch (method) {
                case "Fetch.requestPaused" -> post(command(
                        "Fetch.continueRequest",
                        obj().put("requestId", params.get("requestId").asText())));
                case "Fetch.authRequired" -> {
                    ObjectNode answer = obj();
                    if (user == null) {
                        answer.put("response", "CancelAuth");
                    } else {
                        answer.put("response", "ProvideCredentials")
                                .put("username", user)
                                .put("password", password);
                    }
                    ObjectNode p =
                            obj().put("requestId", params.get("requestId").asText());
                    p.set("authChallengeResponse", answer);
                    post(command("Fetch.continueWithAuth", p));
                }
                case "Network.requestWillBeSent" -> requests.add(
                        params.get("request").get("url").asText());
                case "Network.responseReceived" -> statuses.add(
                        params.get("response").get("status").asInt() + " "
                                + params.get("response").get("url").asText());
                case "Runtime.consoleAPICalled" -> {
                    if (params.get("type").asText().equals("error")) {
                        errors.add("console.error: " + params.get("args"));
                    }
                }
                case "Runtime.exceptionThrown" -> errors.add("exception: " + params.get("exceptionDetails"));
                case "Log.entryAdded" -> {
                    JsonNode e = params.get("entry");
                    if (e.get("level").asText().equals("error")) {
                        errors.add("log: " + e.get("text").asText() + " "
                                + e.path("url").asText());
                    }
                }
                default -> {}
            }
            synchronized (events) {
                events.add(JSON.createObjectNode().put("method", method).set("params", params));
                events.notifyAll();
            }
        }

        private ObjectNode command(String method, ObjectNode params) {
            ObjectNode msg = obj().put("id", ids.incrementAndGet()).put("method", method);
            msg.set("params", params);
            msg.put("sessionId", session);
            return msg;
        }

        /** Waits for an event of {@code method} after the {@code from}-th, returning its params. */
        public JsonNode await(String method, int from, Predicate<JsonNode> test) {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            synchronized (events) {
                while (true) {
                    for (int i = from; i < events.size(); i++) {
                        JsonNode e = events.get(i);
                        if (e.get("method").asText().equals(method) && test.test(e.get("params"))) {
                            return e.get("params");
                        }
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new IllegalStateException("no " + method + " within " + TIMEOUT);
                    }
                    try {
                        events.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                }
            }
        }

        /** How many events so far (a mark to wait from). */
        public int mark() {
            synchronized (events) {
                return events.size();
            }
        }

        /** Opens {@code url} and waits for its load event. */
        public void navigate(String url) {
            int from = mark();
            send("Page.navigate", obj().put("url", url));
            await("Page.loadEventFired", from, p -> true);
        }

        /** Runs {@code fn} after {@code action} and waits for the navigation it causes to load. */
        public void navigating(Runnable action) {
            int from = mark();
            action.run();
            await("Page.loadEventFired", from, p -> true);
        }

        /** Evaluates {@code expression} in the page; returns its value as JSON. */
        public JsonNode eval(String expression) {
            JsonNode r = send(
                    "Runtime.evaluate",
                    obj().put("expression", expression)
                            .put("returnByValue", true)
                            .put("awaitPromise", true));
            if (r.has("exceptionDetails")) {
                throw new IllegalStateException("page threw on " + expression + ": " + r.get("exceptionDetails"));
            }
            return r.get("result").path("value");
        }

        /** Moves the mouse to ({@code x}, {@code y}) in CSS pixels of the viewport, as a user would hover. */
        public void hover(double x, double y) {
            send(
                    "Input.dispatchMouseEvent",
                    obj().put("type", "mouseMoved").put("x", x).put("y", y));
        }

        /** Sets the viewport size. */
        public void viewport(int width, int height) {
            send(
                    "Emulation.setDeviceMetricsOverride",
                    obj().put("width", width)
                            .put("height", height)
                            .put("deviceScaleFactor", 1)
                            .put("mobile", false));
        }

        /** A PNG of the whole page. */
        public byte[] screenshot() {
            JsonNode r =
                    send("Page.captureScreenshot", obj().put("format", "png").put("captureBeyondViewport", true));
            return Base64.getDecoder().decode(r.get("data").asText());
        }
    }
}
