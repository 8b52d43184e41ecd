package dev.fence.store;

import dev.fence.core.InternalException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How the SQL stores read their SQL resources: {@code statements.sql}, statements each under a {@code --
 * name: <name>} line, and {@code schema.sql}, a script of statements each ending with {@code ;} at the end
 * of a line. Comment lines ({@code --}) and blank lines are dropped. A loop, not a pattern: the SQLite store
 * reads its SQL in every hook process.
 */
public final class SqlScripts {
    private static final String NAME_MARK = "-- name:";

    private SqlScripts() {}

    /**
     * The named statements of {@code text}.
     *
     * @throws InternalException when a name is given twice
     */
    public static Map<String, String> parseNamed(String text) {
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

    /**
     * The statements of script {@code text}, in order.
     *
     * @throws InternalException when it ends without {@code ;}
     */
    public static List<String> splitScript(String text) {
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
