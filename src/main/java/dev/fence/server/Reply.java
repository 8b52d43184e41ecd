package dev.fence.server;

import dev.fence.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A response: status, content type, body and any headers of its own.
 *
 * @param status the HTTP status
 * @param contentType the {@code Content-Type}
 * @param body the bytes to send
 * @param headers further response headers, by name (the server's own, such as {@code Cache-Control},
 *     are added when it is sent)
 */
record Reply(int status, String contentType, byte[] body, Map<String, String> headers) {
    Reply {
        headers = Map.copyOf(headers);
    }

    Reply(int status, String contentType, byte[] body) {
        this(status, contentType, body, Map.of());
    }

    /** This reply with header {@code name} set to {@code value} as well. */
    Reply withHeader(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new Reply(status, contentType, body, more);
    }

    static final String JSON = "application/json";
    static final String JSON_LINES = "application/x-ndjson";
    static final String TEXT = "text/plain; charset=utf-8";

    static Reply json(int status, Object value) {
        return new Reply(status, JSON, (Json.write(value) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    static Reply jsonLines(List<? extends Object> values) {
        StringBuilder out = new StringBuilder();
        for (Object v : values) {
            out.append(Json.write(v)).append('\n');
        }
        return new Reply(200, JSON_LINES, out.toString().getBytes(StandardCharsets.UTF_8));
    }

    static Reply text(int status, String text) {
        return new Reply(status, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    /** The error body: JSON {@code {"status":"error","exitCode":n,"message":…}}, or two text lines. */
    static Reply error(int status, String message, boolean text) {
        if (text) {
            return text(status, "error\n" + message + "\n");
        }
        Map<String, Object> m = Json.object();
        m.put("status", "error");
        m.put("httpStatus", status);
        m.put("exitCode", HttpError.exitCodeOf(status));
        m.put("message", message);
        return json(status, m);
    }
}
