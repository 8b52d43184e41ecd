package dev.fence.server;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.fence.json.Json;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.eclipse.jetty.server.Request;

/**
 * One request as the API handlers see it: method, path, query, body (read whole before the handler runs,
 * within the size limit) and the authenticated caller.
 */
final class Call {
    /**
     * fence's mapper, refusing what a lenient parser would guess at: a second document after the first,
     * and a field given twice (which of the two would a proxy or another parser have read?).
     */
    private static final ObjectReader STRICT = Json.mapper()
            .reader()
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .with(StreamReadFeature.STRICT_DUPLICATE_DETECTION.mappedFeature());

    private final Request request;
    private long ready = System.nanoTime();
    private Form query;
    private byte[] body = new byte[0];
    private Credential caller;

    Call(Request request) {
        this.request = request;
    }

    /**
     * Marks the request complete (headers and body read) at {@link System#nanoTime()} {@code nanos}: from
     * here the server, not the client's upload, spends the caller's time.
     */
    void ready(long nanos) {
        this.ready = nanos;
    }

    /** How long ago the request was complete: the time it has waited in the server for a thread. */
    long waitedNanos() {
        return System.nanoTime() - ready;
    }

    String method() {
        return request.getMethod();
    }

    /** The path as sent, still percent-encoded. */
    String path() {
        String p = request.getHttpURI().getPath();
        return p == null ? "" : p;
    }

    String header(String name) {
        return request.getHeaders().get(name);
    }

    /** How many times the request carries header {@code name}. */
    int headerCount(String name) {
        return request.getHeaders().getValuesList(name).size();
    }

    /**
     * The query parameters.
     *
     * @throws HttpError 400 for a malformed query
     */
    Form query() {
        if (query == null) {
            query = Form.parseQuery(request.getHttpURI().getQuery());
        }
        return query;
    }

    Credential caller() {
        return caller;
    }

    void caller(Credential c) {
        this.caller = c;
    }

    /** True when the caller asked for plain text ({@code Accept: text/plain}) rather than JSON. */
    boolean wantsText() {
        String accept = header("Accept");
        return accept != null && accept.toLowerCase(Locale.ROOT).contains("text/plain");
    }

    /** The media type of the body, lower case, without parameters; "" when none was sent. */
    String contentType() {
        String ct = header("Content-Type");
        if (ct == null) {
            return "";
        }
        int semi = ct.indexOf(';');
        return (semi < 0 ? ct : ct.substring(0, semi)).strip().toLowerCase(Locale.ROOT);
    }

    /**
     * Bodies are read as UTF-8 (JSON is UTF-8 by its RFC): one declared in another charset would be
     * misread, so it is refused.
     *
     * @throws HttpError 415 for a {@code charset} other than UTF-8 (or its subset US-ASCII)
     */
    private void requireUtf8() {
        String charset = charset();
        if (charset != null && !charset.equals("utf-8") && !charset.equals("us-ascii")) {
            throw new HttpError(415, "send the body in UTF-8, not charset=" + charset);
        }
    }

    /** The {@code charset} parameter of {@code Content-Type}, lower case and unquoted, or null. */
    private String charset() {
        String ct = header("Content-Type");
        if (ct == null) {
            return null;
        }
        for (String param : ct.split(";")) {
            String p = param.strip();
            if (p.regionMatches(true, 0, "charset=", 0, "charset=".length())) {
                String value = p.substring("charset=".length()).strip();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1);
                }
                return value.toLowerCase(Locale.ROOT);
            }
        }
        return null;
    }

    /** Sets the body, once read. */
    void body(byte[] bytes) {
        this.body = bytes;
    }

    /** The body (empty when there was none). */
    byte[] body() {
        return body;
    }

    /** The body as UTF-8 text. */
    String bodyText() {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(body()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw HttpError.badRequest("the request body is not valid UTF-8");
        }
    }

    /**
     * The body as a JSON object.
     *
     * @throws HttpError 400 when it is not one
     */
    JsonNode json() {
        requireUtf8();
        JsonNode n;
        try {
            n = STRICT.readTree(bodyText());
        } catch (JsonProcessingException e) {
            throw HttpError.badRequest("the request body is not valid JSON: " + describe(e));
        }
        if (n == null || !n.isObject()) {
            throw HttpError.badRequest("the request body must be a JSON object");
        }
        return n;
    }

    /**
     * What the parser found wrong, and where when it knows: a stream-limit exception (nesting depth,
     * number or string length) has no location.
     */
    private static String describe(JsonProcessingException e) {
        String what = e.getOriginalMessage();
        if (what == null || what.isBlank()) {
            what = e.getClass().getSimpleName();
        } else if (what.startsWith("Trailing token")) {
            // Jackson's own words name its classes.
            what = "something follows the JSON object";
        }
        JsonLocation at = e.getLocation();
        if (at == null || at.getLineNr() < 1) {
            return what;
        }
        return what + " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
    }

    /** The body as a form ({@code application/x-www-form-urlencoded}). */
    Form form() {
        requireUtf8();
        String text = new String(body(), StandardCharsets.ISO_8859_1);
        if (text.stripLeading().startsWith("{")) {
            throw HttpError.badRequest("the body looks like JSON but was sent as a form; send it with"
                    + " Content-Type: application/json");
        }
        return Form.parse(text);
    }

    /**
     * The request's parameters: the query for GET, else the body as JSON or a form by its content type.
     *
     * @throws HttpError 415 for another content type
     */
    Params params() {
        if (method().equals("GET")) {
            return Params.of(query());
        }
        return switch (contentType()) {
            case "application/json", "" -> Params.of(json());
            case "application/x-www-form-urlencoded" -> Params.of(form());
            default -> throw new HttpError(
                    415, "send application/json or application/x-www-form-urlencoded, not " + contentType());
        };
    }
}
