package dev.fence.hook;

import dev.fence.core.ConfigException;
import dev.fence.core.Printable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads one variable from one git config file, the way {@code git config --file <f> --get <key>} would,
 * without starting a git process (the hook runs on every push and has a few milliseconds to spare).
 *
 * <p>Supported: {@code #}/{@code ;} comments, {@code [section]} headers (also followed by a variable on
 * the same line), case-insensitive section and variable names, double-quoted parts, the escapes {@code
 * \" \\ \n \t \b}, backslash-newline continuations, and "last value wins". Not supported, on purpose:
 * subsections (fence's keys have none) and {@code [include]}/{@code [includeIf]}: the installer writes
 * {@code fence.repoId} straight into the repository's own {@code config}, and that is the only place the
 * hook looks.
 */
final class GitConfigFile {
    private GitConfigFile() {}

    /**
     * Returns the last value of {@code section.name} in {@code file}, or empty when the file or the
     * variable does not exist. A variable written without {@code =} has the value {@code "true"}.
     *
     * @throws ConfigException when the file exists but cannot be read or parsed
     */
    static Optional<String> get(Path file, String section, String name) {
        String text;
        try {
            byte[] bytes = SmallFiles.readIfExists(file, Integer.MAX_VALUE);
            if (bytes == null) {
                return Optional.empty();
            }
            text = new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException("cannot read git config " + file + ": " + e.getMessage(), e);
        }
        return new Scanner(file, text).find(section.toLowerCase(Locale.ROOT), name.toLowerCase(Locale.ROOT));
    }

    /**
     * {@code value} as git reads a boolean: {@code true}, {@code yes}, {@code on} (in any case) and a
     * non-zero number are true; {@code false}, {@code no}, {@code off}, the empty value and zero are false.
     * A value git would refuse as no boolean is true here: callers ask about settings that close more
     * when set.
     */
    static boolean isTrue(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        switch (v) {
            case "false", "no", "off", "" -> {
                return false;
            }
            case "true", "yes", "on" -> {
                return true;
            }
            default -> {
                try {
                    return Long.parseLong(v) != 0;
                } catch (NumberFormatException e) {
                    return true;
                }
            }
        }
    }

    private static final class Scanner {
        private final Path file;
        private final String text;
        private int pos;
        private int line = 1;

        Scanner(Path file, String text) {
            this.file = file;
            this.text = text;
        }

        Optional<String> find(String wantedSection, String wantedName) {
            String section = null;
            String found = null;
            while (pos < text.length()) {
                skipBlanks();
                if (pos >= text.length()) {
                    break;
                }
                char c = text.charAt(pos);
                if (c == '\n') {
                    pos++;
                    line++;
                } else if (c == '#' || c == ';') {
                    skipToEndOfLine();
                } else if (c == '[') {
                    section = header();
                } else if (Character.isLetter(c)) {
                    String name = variableName();
                    skipBlanks();
                    String value = "true";
                    if (pos < text.length() && text.charAt(pos) == '=') {
                        pos++;
                        value = value();
                    } else {
                        skipToEndOfLine();
                    }
                    if (wantedSection.equals(section) && wantedName.equals(name)) {
                        found = value;
                    }
                } else {
                    throw bad("unexpected character '" + Printable.escape(String.valueOf(c), 8) + "'");
                }
            }
            return Optional.ofNullable(found);
        }

        /** Reads {@code [name]} or {@code [name "sub"]}; a subsection makes the section one fence never reads. */
        private String header() {
            int close = text.indexOf(']', pos);
            int eol = text.indexOf('\n', pos);
            if (close < 0 || (eol >= 0 && close > eol)) {
                throw bad("section header without ']'");
            }
            String inside = text.substring(pos + 1, close).trim();
            pos = close + 1;
            int space = inside.indexOf(' ');
            String name = (space < 0 ? inside : inside.substring(0, space)).toLowerCase(Locale.ROOT);
            // "[fence \"x\"]" or the old "[fence.x]" form names a subsection: keep it distinct from "fence".
            return space < 0 ? name : name + " \"sub\"";
        }

        private String variableName() {
            int start = pos;
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (Character.isLetterOrDigit(c) || c == '-') {
                    pos++;
                } else {
                    break;
                }
            }
            return text.substring(start, pos).toLowerCase(Locale.ROOT);
        }

        private String value() {
            StringBuilder out = new StringBuilder();
            boolean quoted = false;
            int trailing = 0; // unquoted whitespace at the end of out, dropped if the value ends there
            skipBlanks();
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (c == '\n') {
                    if (quoted) {
                        throw bad("newline inside a quoted value");
                    }
                    break;
                } else if (!quoted && (c == '#' || c == ';')) {
                    skipToEndOfLine();
                    break;
                } else if (c == '"') {
                    quoted = !quoted;
                    trailing = 0;
                    pos++;
                } else if (c == '\\') {
                    pos++;
                    if (pos >= text.length()) {
                        throw bad("backslash at the end of the file");
                    }
                    char e = text.charAt(pos++);
                    switch (e) {
                        case '\n' -> line++;
                        case 'n' -> out.append('\n');
                        case 't' -> out.append('\t');
                        case 'b' -> out.append('\b');
                        case '"', '\\' -> out.append(e);
                        default -> throw bad("unknown escape '\\" + Printable.escape(String.valueOf(e), 8) + "'");
                    }
                    trailing = 0;
                } else {
                    out.append(c);
                    trailing = (!quoted && (c == ' ' || c == '\t' || c == '\r')) ? trailing + 1 : 0;
                    pos++;
                }
            }
            if (quoted) {
                throw bad("unterminated quoted value");
            }
            out.setLength(out.length() - trailing);
            return out.toString();
        }

        private void skipBlanks() {
            while (pos < text.length()
                    && (text.charAt(pos) == ' ' || text.charAt(pos) == '\t' || text.charAt(pos) == '\r')) {
                pos++;
            }
        }

        private void skipToEndOfLine() {
            while (pos < text.length() && text.charAt(pos) != '\n') {
                pos++;
            }
        }

        private ConfigException bad(String problem) {
            return new ConfigException("git config " + file + ":" + line + ": " + problem);
        }
    }
}
