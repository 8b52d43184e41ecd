package dev.fence.store.sqlite;

import dev.fence.core.InternalException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The SQL of the SQLite store, written as SQL in {@code schema.sql} and {@code statements.sql} (resources
 * next to this class) and compiled into {@link SqlText} by the build, so that a hook finds it in the
 * class-data archive instead of opening the jar to read a resource. Immutable once loaded; thread-safe.
 */
final class SqlResources {
    private static final String NAME_MARK = "-- name:";

    private final Map<String, String> statements;
    private final List<String> schema;

    private SqlResources(Map<String, String> statements, List<String> schema) {
        this.statements = statements;
        this.schema = schema;
    }

    /** Loads {@code statements.sql} and {@code schema.sql}, as the build compiled them into {@link SqlText}. */
    static SqlResources load() {
        return new SqlResources(parseNamed(SqlText.STATEMENTS), splitScript(SqlText.SCHEMA));
    }

    /** The statement called {@code name} in {@code statements.sql}. */
    String get(String name) {
        String sql = statements.get(name);
        if (sql == null) {
            throw new InternalException("statements.sql has no statement named '" + name + "'");
        }
        return sql;
    }

    /** The statements of {@code schema.sql}, in order. */
    List<String> schema() {
        return schema;
    }

    private static Map<String, String> parseNamed(String text) {
        Map<String, String> out = new HashMap<>();
        String name = null;
        StringBuilder body = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String trimmed = line.strip();
            if (trimmed.startsWith(NAME_MARK)) {
                put(out, name, body);
                name = trimmed.substring(NAME_MARK.length()).strip();
                body.setLength(0);
            } else if (!trimmed.startsWith("--") && !trimmed.isEmpty()) {
                body.append(line).append('\n');
            }
        }
        put(out, name, body);
        return Map.copyOf(out);
    }

    private static void put(Map<String, String> out, String name, StringBuilder body) {
        if (name != null && out.put(name, body.toString().strip()) != null) {
            throw new InternalException("statements.sql names '" + name + "' twice");
        }
    }

    private static List<String> splitScript(String text) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String trimmed = line.strip();
            if (trimmed.startsWith("--") || trimmed.isEmpty()) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                out.add(current.toString().strip());
                current.setLength(0);
            }
        }
        if (!current.toString().isBlank()) {
            throw new InternalException("schema.sql ends without ';'");
        }
        return List.copyOf(out);
    }
}
