import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Build step (run by the pom at generate-sources, as a single-file program): writes the SQLite store's SQL
 * resources into a Java class, {@code dev.fence.store.sqlite.SqlText}, so that a hook reads its SQL from
 * the class-data archive instead of opening the jar for a resource. The {@code .sql} files stay the source,
 * and stay in the jar; {@code SqlResourcesTest} checks the class says what they say.
 *
 * <p>Arguments: the directory holding {@code schema.sql} and {@code statements.sql}, and the Java file to
 * write.
 */
public final class GenerateSqlText {
    private GenerateSqlText() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: GenerateSqlText <dir with the .sql files> <output .java>");
        }
        Path dir = Path.of(args[0]);
        Path out = Path.of(args[1]);
        String statements = read(dir.resolve("statements.sql"));
        Map<String, String> named = named(statements);
        String java = "package dev.fence.store.sqlite;\n"
                + "\n"
                + "/** Generated from schema.sql and statements.sql by src/build/GenerateSqlText.java: do not edit. */\n"
                + "final class SqlText {\n"
                + "    private SqlText() {}\n"
                + "\n"
                + "    /** schema.sql. */\n"
                + "    static final String SCHEMA = " + literal(read(dir.resolve("schema.sql"))) + ";\n"
                + "\n"
                + "    /** statements.sql. */\n"
                + "    static final String STATEMENTS = " + literal(statements) + ";\n"
                + "\n"
                + "    /** The names of statements.sql's statements, in the file's order. */\n"
                + "    static final String[] STATEMENT_NAMES = {" + literals(named.keySet()) + "};\n"
                + "\n"
                + "    /** Those statements, as SqlScripts.parseNamed reads them (SqlResourcesTest checks). */\n"
                + "    static final String[] STATEMENT_SQL = {" + literals(named.values()) + "};\n"
                + "}\n";
        Files.createDirectories(out.getParent());
        if (!Files.exists(out) || !Files.readString(out, StandardCharsets.UTF_8).equals(java)) {
            Files.writeString(out, java, StandardCharsets.UTF_8);
        }
    }

    /**
     * The named statements of {@code text}, in order: as {@code dev.fence.store.SqlScripts.parseNamed} reads
     * them (this build step runs before that class is compiled), each under a {@code -- name:} line, without
     * comment and blank lines. A hook then looks a statement up instead of parsing the file.
     */
    static Map<String, String> named(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        String name = null;
        StringBuilder body = new StringBuilder();
        for (String line : (text + "\n-- name:").split("\n", -1)) {
            String trimmed = line.strip();
            if (trimmed.startsWith("-- name:")) {
                if (name != null && out.put(name, body.toString().strip()) != null) {
                    throw new IllegalArgumentException("statements.sql names '" + name + "' twice");
                }
                name = trimmed.substring("-- name:".length()).strip();
                body.setLength(0);
            } else if (!trimmed.startsWith("--") && !trimmed.isEmpty()) {
                body.append(line).append('\n');
            }
        }
        return out;
    }

    private static String literals(Collection<String> texts) {
        StringBuilder b = new StringBuilder();
        for (String t : texts) {
            b.append("\n            ").append(literal(t)).append(',');
        }
        return b.append("\n    ").toString();
    }

    private static String read(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8);
    }

    /** {@code text} as a Java string literal: ASCII only, every other character escaped. */
    static String literal(String text) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n\"\n            + \"");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
