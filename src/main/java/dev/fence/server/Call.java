package dev.fence.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.fence.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One request as the API handlers see it: method, path, query, body (read once, within the size limit)
 * and the authenticated caller.
 */
final class Call {
    /** Bodies past the limit are still read and thrown away up to this multiple, so the reply arrives. */
    private static final int DRAIN_FACTOR = 4;

    private final HttpExchange exchange;
    private final int maxBody;
    private final Form query;
    private byte[] body;
    private Credential caller;

    Call(HttpExchange exchange, int maxBody) {
        this.exchange = exchange;
        this.maxBody = maxBody;
        this.query = Form.parse(exchange.getRequestURI().getRawQuery());
    }

    String method() {
        return exchange.getRequestMethod();
    }

    String header(String name) {
        return exchange.getRequestHeaders().getFirst(name);
    }

    Form query() {
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
     * The body, read to its end.
     *
     * @throws HttpError 413 when it is longer than the limit
     */
    byte[] body() {
        if (body != null) {
            return body;
        }
        String length = header("Content-Length");
        long declared = -1;
        if (length != null) {
            try {
                declared = Long.parseLong(length.strip());
            } catch (NumberFormatException e) {
                throw HttpError.badRequest("Content-Length is not a number");
            }
        }
        try (InputStream in = exchange.getRequestBody()) {
            if (declared > maxBody) {
                drain(in, (long) maxBody * DRAIN_FACTOR);
                throw tooLarge();
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(declared > 0 ? (int) declared : 8192);
            byte[] buf = new byte[65536];
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
                if (out.size() > maxBody) {
                    drain(in, (long) maxBody * DRAIN_FACTOR);
                    throw tooLarge();
                }
            }
            body = out.toByteArray();
            return body;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the request body failed", e);
        }
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
        JsonNode n;
        try {
            n = Json.read(bodyText());
        } catch (JsonProcessingException e) {
            throw HttpError.badRequest("the request body is not valid JSON: "
                    + e.getOriginalMessage() + " (line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + ")");
        }
        if (n == null || !n.isObject()) {
            throw HttpError.badRequest("the request body must be a JSON object");
        }
        return n;
    }

    /** The body as a form ({@code application/x-www-form-urlencoded}). */
    Form form() {
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
            return Params.of(query);
        }
        return switch (contentType()) {
            case "application/json", "" -> Params.of(json());
            case "application/x-www-form-urlencoded" -> Params.of(form());
            default -> throw new HttpError(
                    415, "send application/json or application/x-www-form-urlencoded, not " + contentType());
        };
    }

    private HttpError tooLarge() {
        return new HttpError(413, "the request body is larger than the server's limit of " + maxBody + " bytes");
    }

    private static void drain(InputStream in, long max) throws IOException {
        byte[] buf = new byte[65536];
        long total = 0;
        int n;
        while (total < max && (n = in.read(buf)) >= 0) {
            total += n;
        }
    }
}
