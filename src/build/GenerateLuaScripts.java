import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Build step (run by the pom at generate-sources, as a single-file program): writes {@code
 * dev.fence.store.redis.Scripts}, one {@code LuaScript} constant per {@code <name>.lua} resource beside
 * {@code lib.lua}, each with the SHA-1 that Redis names it by: that of {@code lib.lua}, a newline and
 * {@code <name>.lua}, as {@code LuaScript} assembles the text it sends. The store then calls {@code
 * EVALSHA} without reading a script from the jar; {@code LuaScriptTest} checks each id against the text.
 *
 * <p>Arguments: the directory holding the {@code .lua} files, and the Java file to write.
 */
public final class GenerateLuaScripts {
    private GenerateLuaScripts() {}

    public static void main(String[] args) throws IOException, NoSuchAlgorithmException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: GenerateLuaScripts <dir with the .lua files> <output .java>");
        }
        Path dir = Path.of(args[0]);
        Path out = Path.of(args[1]);
        String lib = Files.readString(dir.resolve("lib.lua"), StandardCharsets.UTF_8);
        List<Path> scripts;
        try (Stream<Path> files = Files.list(dir)) {
            scripts = files.filter(p -> p.getFileName().toString().endsWith(".lua"))
                    .filter(p -> !p.getFileName().toString().equals("lib.lua"))
                    .sorted()
                    .toList();
        }
        StringBuilder java = new StringBuilder()
                .append("package dev.fence.store.redis;\n\n")
                .append("/** Generated from the .lua resources by src/build/GenerateLuaScripts.java: do not edit. */\n")
                .append("final class Scripts {\n")
                .append("    private Scripts() {}\n");
        for (Path script : scripts) {
            String file = script.getFileName().toString();
            String name = file.substring(0, file.length() - ".lua".length());
            if (!name.matches("[a-z][a-z0-9_]*")) {
                throw new IllegalArgumentException("script name must be lower-case words joined by _: " + file);
            }
            String text = lib + "\n" + Files.readString(script, StandardCharsets.UTF_8);
            String sha1 = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
            java.append("\n    /** lib.lua and ")
                    .append(file)
                    .append(". */\n")
                    .append("    static final LuaScript ")
                    .append(name.toUpperCase(Locale.ROOT))
                    .append(" = LuaScript.of(\"")
                    .append(name)
                    .append("\", \"")
                    .append(sha1)
                    .append("\");\n");
        }
        java.append("}\n");
        Files.createDirectories(out.getParent());
        String text = java.toString();
        if (!Files.exists(out) || !Files.readString(out, StandardCharsets.UTF_8).equals(text)) {
            Files.writeString(out, text, StandardCharsets.UTF_8);
        }
    }
}
