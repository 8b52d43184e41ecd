package dev.fence.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.fence.core.EventType;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.Grant;
import dev.fence.core.Lease;
import dev.fence.core.LedgerEvent;
import dev.fence.core.Reason;
import dev.fence.core.Tip;
import dev.fence.migrate.MigrationStatus;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * fence's JSON: one configured mapper and the documented shape of every value fence prints or serves.
 * Field names are a contract with scripts; add fields, never rename them. Instants are ISO-8601 UTC
 * strings. Proofs appear only in a grant ({@link #grant}), which only its holder receives.
 *
 * <p>Thread-safe.
 */
public final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

    private Json() {}

    /** The shared mapper (thread-safe once configured). */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /** One line of JSON. */
    public static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    /** Parses a JSON document. */
    public static JsonNode read(String text) throws JsonProcessingException {
        return MAPPER.readTree(text);
    }

    /**
     * Parses a JSON object as ordered maps and lists (numbers, strings, booleans and nulls as Java values),
     * so that code outside this package can edit a document someone else owns and write it back with every
     * key it did not touch, in its order.
     *
     * @throws java.io.IOException when {@code text} is not JSON or not an object, has a key twice, or has
     *     anything after the object (a Jackson exception)
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> readObject(String text) throws java.io.IOException {
        // Strict: a duplicate key or text after the object would be dropped silently, and a file merged
        // from what was read would lose it.
        JsonNode n = MAPPER.reader()
                .with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .with(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .readTree(text);
        if (n == null || !n.isObject()) {
            throw com.fasterxml.jackson.databind.JsonMappingException.from(
                    (com.fasterxml.jackson.core.JsonParser) null, "not a JSON object");
        }
        return MAPPER.convertValue(n, LinkedHashMap.class);
    }

    /** Indented JSON for files people read, ending with a newline. */
    public static String writePretty(Object value) {
        try {
            return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    /** An ordered map, for building objects. */
    public static Map<String, Object> object() {
        return new LinkedHashMap<>();
    }

    public static String instant(Instant t) {
        return t == null ? null : t.toString();
    }

    /** A grant, proof included: what {@code lease acquire --json} prints. */
    public static Map<String, Object> grant(Grant g) {
        Map<String, Object> m = object();
        m.put("status", "granted");
        m.put("resource", g.resource());
        m.put("holder", g.holder());
        m.put("token", g.token());
        m.put("proof", g.proof());
        m.put("generation", g.generation());
        m.put("grantedAt", instant(g.grantedAt()));
        m.put("expiresAt", instant(g.expiresAt()));
        m.put("grantSha", g.grantSha());
        m.put("previous", lease(g.previous(), null));
        m.put("tip", tip(g.tip()));
        return m;
    }

    /** A lease (never with a proof); {@code live} is computed against {@code now} when given. */
    public static Map<String, Object> lease(Lease l, Instant now) {
        if (l == null) {
            return null;
        }
        Map<String, Object> m = object();
        m.put("holder", l.holder());
        m.put("token", l.token());
        m.put("grantedAt", instant(l.grantedAt()));
        m.put("expiresAt", instant(l.expiresAt()));
        m.put("released", l.released());
        if (now != null) {
            m.put("live", l.isLive(now));
        }
        m.put("grantSha", l.grantSha());
        return m;
    }

    /** A recorded write. */
    public static Map<String, Object> tip(Tip t) {
        if (t == null) {
            return null;
        }
        Map<String, Object> m = object();
        m.put("sha", t.sha());
        m.put("token", t.token());
        m.put("holder", t.holder());
        m.put("pusher", t.pusher());
        m.put("at", instant(t.at()));
        return m;
    }

    /** A FENCED (or REJECTED) outcome with its message lines. */
    public static Map<String, Object> fenced(Fenced f) {
        Map<String, Object> m = object();
        m.put("status", FencedMessage.isFencing(f.reason()) ? "fenced" : "rejected");
        m.put("resource", f.resource());
        m.put("ref", f.ref());
        m.put("token", f.token());
        m.put("current", f.current());
        m.put("reason", f.reason().code());
        m.put("holder", f.currentHolder());
        m.put("tip", tip(f.tip()));
        m.put("detail", f.detail());
        m.put("message", FencedMessage.lines(f));
        return m;
    }

    /** A ledger event (JSON lines of {@code fence audit --json}). */
    public static Map<String, Object> event(LedgerEvent e) {
        Map<String, Object> m = object();
        m.put("seq", e.seq());
        m.put("at", instant(e.at()));
        m.put("type", e.type().label());
        m.put("resource", e.resource());
        m.put("repo", e.repo());
        m.put("ref", e.ref());
        m.put("holder", e.holder());
        m.put("pusher", e.pusher());
        m.put("token", e.token());
        m.put("oldSha", e.oldSha());
        m.put("newSha", e.newSha());
        m.put("reason", e.reason());
        m.put("detail", e.detail());
        return m;
    }

    // Reading back: the client of fence serve turns the server's JSON into the same values a direct
    // call returns, so that both print the same output. Each throws IllegalArgumentException on a shape
    // it does not know.

    /**
     * Parses the JSON object {@code lease acquire --json} prints.
     *
     * @throws dev.fence.core.InvalidInputException when the text is not such an object
     */
    public static Grant parseGrant(String text) {
        try {
            return readGrant(read(text));
        } catch (JsonProcessingException | RuntimeException e) {
            throw new dev.fence.core.InvalidInputException("not a grant: " + e.getMessage());
        }
    }

    /**
     * Parses the JSON object {@code fence migrate status --json} prints.
     *
     * @throws dev.fence.core.InvalidInputException when the text is not such an object
     */
    public static MigrationStatus parseMigrationStatus(String text) {
        try {
            JsonNode n = read(text);
            List<MigrationStatus.Entry> entries = new ArrayList<>();
            for (JsonNode e : n.path("migrations")) {
                JsonNode t = e.get("appliedToken");
                entries.add(new MigrationStatus.Entry(
                        text(e, "version"),
                        text(e, "file"),
                        e.path("applied").asBoolean(false),
                        t == null || t.isNull() ? null : number(e, "appliedToken"),
                        text(e, "appliedHolder")));
            }
            return new MigrationStatus(
                    text(n, "db"),
                    text(n, "dir"),
                    text(n, "resource"),
                    number(n, "fenceToken"),
                    n.path("flyway").asBoolean(false),
                    List.copyOf(entries));
        } catch (JsonProcessingException | RuntimeException e) {
            throw new dev.fence.core.InvalidInputException("not a migration status: " + e.getMessage());
        }
    }

    /** Reads {@link #grant}. */
    public static Grant readGrant(JsonNode n) {
        return new Grant(
                text(n, "resource"),
                text(n, "holder"),
                number(n, "token"),
                text(n, "proof"),
                text(n, "generation"),
                readInstant(n, "grantedAt"),
                readInstant(n, "expiresAt"),
                text(n, "grantSha"),
                readLease(n.get("previous")),
                readTip(n.get("tip")));
    }

    /** Reads {@link #lease}; null for JSON null or a missing node. */
    public static Lease readLease(JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        return new Lease(
                text(n, "holder"),
                number(n, "token"),
                readInstant(n, "grantedAt"),
                readInstant(n, "expiresAt"),
                n.path("released").asBoolean(false),
                text(n, "grantSha"));
    }

    /** Reads {@link #tip}; null for JSON null or a missing node. */
    public static Tip readTip(JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        return new Tip(text(n, "sha"), number(n, "token"), text(n, "holder"), text(n, "pusher"), readInstant(n, "at"));
    }

    /** Reads {@link #fenced}. */
    public static Fenced readFenced(JsonNode n) {
        Reason reason = Reason.fromCode(text(n, "reason"));
        if (reason == null) {
            throw new IllegalArgumentException("unknown reason '" + text(n, "reason") + "'");
        }
        return new Fenced(
                text(n, "resource"),
                text(n, "ref"),
                number(n, "token"),
                number(n, "current"),
                reason,
                text(n, "holder"),
                readTip(n.get("tip")),
                text(n, "detail"));
    }

    /** Reads {@link #event}. */
    public static LedgerEvent readEvent(JsonNode n) {
        return new LedgerEvent(
                number(n, "seq"),
                readInstant(n, "at"),
                EventType.parse(text(n, "type")),
                text(n, "resource"),
                text(n, "repo"),
                text(n, "ref"),
                text(n, "holder"),
                text(n, "pusher"),
                number(n, "token"),
                text(n, "oldSha"),
                text(n, "newSha"),
                text(n, "reason"),
                text(n, "detail"));
    }

    /** A text field, null when missing or null. */
    public static String text(JsonNode n, String field) {
        JsonNode v = n == null ? null : n.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException(field + " must be a string");
        }
        return v.asText();
    }

    private static long number(JsonNode n, String field) {
        JsonNode v = n == null ? null : n.get(field);
        if (v == null || v.isNull()) {
            return 0;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new IllegalArgumentException(field + " must be a whole number");
        }
        return v.asLong();
    }

    private static Instant readInstant(JsonNode n, String field) {
        String t = text(n, field);
        try {
            return t == null ? null : Instant.parse(t);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(field + " is not an ISO-8601 instant");
        }
    }
}
