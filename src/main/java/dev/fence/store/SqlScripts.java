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
        for (int mark = nextMark(text, 0); mark >= 0; ) {
            int end = endOfLine(text, mark);
            String name = text.substring(mark + NAME_MARK.length(), end).strip();
            if (out.put(name, body(text, end + 1)) != null) {
                throw new InternalException("statements.sql names '" + name + "' twice");
            }
            mark = nextMark(text, end);
        }
        return Map.copyOf(out);
    }

    /**
     * The statement called {@code name} in {@code text}, as {@link #parseNamed} reads it, without reading
     * the others (a hook runs a few of the SQLite store's statements); null when there is none.
     */
    public static String named(String text, String name) {
        for (int mark = nextMark(text, 0); mark >= 0; ) {
            int end = endOfLine(text, mark);
            if (text.substring(mark + NAME_MARK.length(), end).strip().equals(name)) {
                return body(text, end + 1);
            }
            mark = nextMark(text, end);
        }
        return null;
    }

    /** Where the next line from {@code from} that starts (after whitespace) with the name mark has it; or -1. */
    private static int nextMark(String text, int from) {
        for (int at = text.indexOf(NAME_MARK, from); at >= 0; at = text.indexOf(NAME_MARK, at + 1)) {
            if (text.substring(text.lastIndexOf('\n', at) + 1, at).isBlank()) {
                return at;
            }
        }
        return -1;
    }

    private static int endOfLine(String text, int from) {
        int end = text.indexOf('\n', from);
        return end < 0 ? text.length() : end;
    }

    /** The statement whose lines begin at {@code from}: up to the next name mark, without comments or blanks. */
    private static String body(String text, int from) {
        StringBuilder body = new StringBuilder();
        for (int start = from; start < text.length(); ) {
            int end = endOfLine(text, start);
            String line = text.substring(start, end);
            String trimmed = line.strip();
            if (trimmed.startsWith(NAME_MARK)) {
                break;
            }
            if (!trimmed.startsWith("--") && !trimmed.isEmpty()) {
                body.append(line).append('\n');
            }
            start = end + 1;
        }
        return body.toString().strip();
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
