package dev.fence.server.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.ConfigException;
import dev.fence.core.InternalException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.StoreUnavailableException;
import dev.fence.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A connection to {@code fence serve}: base URL, credential and timeouts. Thread-safe.
 *
 * <p>The credential ({@code <name>:<secret>}) comes from, in order: {@value #CREDENTIAL_ENV}; the file
 * named by {@value #CREDENTIAL_FILE_ENV}; {@code ~/.config/fence/credential}. Never from an argument,
 * where other users could read it in the process list.
 */
public final class FenceClient {
    /** The environment variable holding the credential itself. */
    public static final String CREDENTIAL_ENV = "FENCE_CREDENTIAL";

    /** The environment variable naming a file that holds the credential. */
    public static final String CREDENTIAL_FILE_ENV = "FENCE_CREDENTIAL_FILE";

    /** The environment variable naming the server when {@code --server} is not given. */
    public static final String SERVER_ENV = "FENCE_SERVER";

    private static final Pattern CREDENTIAL = Pattern.compile("[A-Za-z0-9._-]{1,64}:[A-Za-z0-9_-]{32,128}");

    private final URI base;
    private final String authorization;
    private final Duration timeout;
    private final HttpClient http;

    private FenceClient(URI base, String credential, Duration timeout) {
        this.base = base;
        this.authorization = "Bearer " + credential;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofMillis(Math.min(timeout.toMillis(), 1000)))
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /**
     * A client of the server at {@code url}.
     *
     * @param env the environment (credential variables, {@code HOME})
     * @param timeout the longest one request may take
     * @throws ConfigException for a bad URL or a missing or malformed credential
     */
    public static FenceClient create(String url, Map<String, String> env, Duration timeout) {
        return new FenceClient(baseUri(url), credential(env), timeout);
    }

    /** The server's base URL. */
    public URI base() {
        return base;
    }

    /** The credential from the environment or its file. */
    public static String credential(Map<String, String> env) {
        String value = env.get(CREDENTIAL_ENV);
        String source = CREDENTIAL_ENV;
        if (value == null || value.isBlank()) {
            String file = env.get(CREDENTIAL_FILE_ENV);
            Path path = null;
            if (file != null && !file.isBlank()) {
                path = Path.of(file);
                source = CREDENTIAL_FILE_ENV + " (" + path + ")";
            } else if (env.get("HOME") != null && !env.get("HOME").isBlank()) {
                Path fallback = Path.of(env.get("HOME"), ".config", "fence", "credential");
                if (Files.isRegularFile(fallback)) {
                    path = fallback;
                    source = fallback.toString();
                }
            }
            if (path == null) {
                throw new ConfigException("no credential for the fence server: set " + CREDENTIAL_ENV + " to"
                        + " <name>:<secret>, or " + CREDENTIAL_FILE_ENV + " to a file holding it, or write it to"
                        + " ~/.config/fence/credential ('fence serve credentials add' makes one)");
            }
            try {
                value = Files.readString(path, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new ConfigException("cannot read the credential from " + source + ": " + e.getMessage(), e);
            }
        }
        value = value.strip();
        if (!CREDENTIAL.matcher(value).matches()) {
            // Never echo it: even a malformed credential may be most of a secret.
            throw new ConfigException("the credential in " + source + " is not of the form <name>:<secret>");
        }
        return value;
    }

    static URI baseUri(String url) {
        URI uri;
        try {
            uri = URI.create(url.strip());
        } catch (IllegalArgumentException e) {
            throw new ConfigException("fence server URL is not a valid URL: " + e.getMessage());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
            throw new ConfigException("fence server URL must be http://host:port or https://host:port");
        }
        String s = uri.toString();
        return URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
    }

    /**
     * An answer: HTTP status, body and headers.
     *
     * @param status the HTTP status
     * @param body the body
     * @param headers the response headers
     */
    public record Response(int status, String body, java.net.http.HttpHeaders headers) {
        /** An answer without headers. */
        public Response(int status, String body) {
            this(status, body, java.net.http.HttpHeaders.of(Map.of(), (name, value) -> true));
        }

        /** The first value of header {@code name} (in any case), or null when the answer has none. */
        public String header(String name) {
            return headers.firstValue(name).orElse(null);
        }

        /** The body as JSON. */
        public JsonNode json() {
            try {
                return Json.read(body);
            } catch (JsonProcessingException e) {
                throw new InternalException("the fence server sent malformed JSON (HTTP " + status + ")", e);
            }
        }

        /** The {@code message} of an error body, or the status alone. */
        public String message() {
            try {
                JsonNode n = Json.read(body);
                if (n != null && n.hasNonNull("message")) {
                    return n.get("message").asText();
                }
            } catch (JsonProcessingException e) {
                // fall through
            }
            return "HTTP " + status;
        }
    }

    /** POSTs a JSON object. */
    public Response post(String path, Object body) {
        HttpRequest request = request(path)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(body)))
                .build();
        return send(request);
    }

    /** GETs {@code path} with the query parameters (null values left out), accepting JSON. */
    public Response get(String path, Map<String, String> query) {
        return get(path, query, "application/json");
    }

    /** GETs {@code path} with the query parameters (null values left out), accepting {@code accept}. */
    public Response get(String path, Map<String, String> query, String accept) {
        StringBuilder q = new StringBuilder();
        for (var e : query.entrySet()) {
            if (e.getValue() == null) {
                continue;
            }
            q.append(q.length() == 0 ? "?" : "&")
                    .append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8))
                    .append('=')
                    .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
        }
        return send(request(path + q).header("Accept", accept).GET().build());
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout).header("Authorization", authorization);
    }

    private Response send(HttpRequest request) {
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Response(r.statusCode(), r.body(), r.headers());
        } catch (IOException e) {
            throw new StoreUnavailableException(
                    "the fence server at " + base + " could not be reached: " + describe(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting for the fence server", e);
        }
    }

    private String describe(IOException e) {
        if (e instanceof java.net.http.HttpTimeoutException) {
            return "no answer within " + timeout.toMillis() + " ms";
        }
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /**
     * The failure an error answer stands for: 400-class input errors → {@link InvalidInputException} (exit
     * 2); 401/403 → {@link ConfigException} (exit 6: the credential is wrong or lacks the role); 408 (the
     * request did not arrive in time), 503 and other 5xx → {@link StoreUnavailableException} (exit 5).
     */
    public RuntimeException failure(Response r) {
        String m = "fence server: " + r.message();
        return switch (r.status()) {
            case 401, 403 -> new ConfigException(m);
            case 400, 404, 405, 413, 415, 431 -> new InvalidInputException(m);
            case 408 -> new StoreUnavailableException(m);
            default -> r.status() >= 500
                    ? new StoreUnavailableException(m)
                    : new InternalException("unexpected answer from the fence server: HTTP " + r.status());
        };
    }
}
