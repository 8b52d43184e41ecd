import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

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
                + "    static final String STATEMENTS = " + literal(read(dir.resolve("statements.sql"))) + ";\n"
                + "}\n";
        Files.createDirectories(out.getParent());
        if (!Files.exists(out) || !Files.readString(out, StandardCharsets.UTF_8).equals(java)) {
            Files.writeString(out, java, StandardCharsets.UTF_8);
        }
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
