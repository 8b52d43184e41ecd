package dev.fence.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.UsageMessageSpec;

/**
 * Wraps {@code --help} at spaces only. picocli wraps at the line-break opportunities of {@link
 * java.text.BreakIterator}, which also fall after a dot or a slash inside a word, so a path, a URL or a
 * git setting came out split across lines ({@code fence.} / {@code conf}, {@code custom_hooks/pre-receive.}
 * / {@code d/50-fence}), and pasted back it no longer names anything. Here picocli lays the help out on one
 * very wide line per row, and each section is then wrapped to {@link #WIDTH} between words, with picocli's
 * own hanging indents; a word longer than the room left runs past the width rather than being cut. Examples
 * (the footer, and indented lines of a description) are commands to copy and are never wrapped.
 */
final class HelpWrap {
    /** The help width, as picocli's default. */
    static final int WIDTH = 80;

    /** Wide enough that picocli never wraps a row itself. */
    private static final int UNWRAPPED = 10_000;

    /** picocli's extra indent for the wrapped lines of a table cell. */
    private static final int CELL_INDENT = 2;

    private static final Set<String> TABLES = Set.of(
            UsageMessageSpec.SECTION_KEY_OPTION_LIST,
            UsageMessageSpec.SECTION_KEY_PARAMETER_LIST,
            UsageMessageSpec.SECTION_KEY_COMMAND_LIST,
            UsageMessageSpec.SECTION_KEY_EXIT_CODE_LIST);

    private static final Set<String> PARAGRAPHS =
            Set.of(UsageMessageSpec.SECTION_KEY_HEADER, UsageMessageSpec.SECTION_KEY_DESCRIPTION);

    private HelpWrap() {}

    /** Makes {@code cl}'s help (not its subcommands') wrap between words. */
    static void apply(CommandLine cl) {
        cl.getCommandSpec().usageMessage().width(UNWRAPPED);
        Map<String, CommandLine.IHelpSectionRenderer> sections = cl.getHelpSectionMap();
        for (Map.Entry<String, CommandLine.IHelpSectionRenderer> e : sections.entrySet()) {
            String key = e.getKey();
            CommandLine.IHelpSectionRenderer plain = e.getValue();
            if (TABLES.contains(key)) {
                e.setValue(help -> table(plain.render(help)));
            } else if (PARAGRAPHS.contains(key)) {
                e.setValue(help -> paragraphs(plain.render(help)));
            } else if (key.equals(UsageMessageSpec.SECTION_KEY_SYNOPSIS)) {
                e.setValue(help -> synopsis(
                        plain.render(help),
                        help.synopsisHeading(),
                        help.commandSpec().qualifiedName()));
            }
        }
        cl.setHelpSectionMap(sections);
    }

    /** Rows of a table: wrapped lines of a cell start two columns right of the cell's text. */
    static String table(String text) {
        StringBuilder out = new StringBuilder();
        for (String line : lines(text)) {
            out.append(wrap(line, cellStart(line) + CELL_INDENT));
        }
        return out.toString();
    }

    /** Paragraphs: wrapped lines keep the paragraph's indent; indented lines are examples, kept whole. */
    static String paragraphs(String text) {
        StringBuilder out = new StringBuilder();
        for (String line : lines(text)) {
            out.append(line.startsWith(" ") ? line : wrap(line, 0));
        }
        return out.toString();
    }

    /**
     * The synopsis, printed after {@code heading} on its line: wrapped lines line up after {@code Usage:
     * <command> }, as picocli's do.
     */
    static String synopsis(String text, String heading, String command) {
        String first = heading.substring(heading.lastIndexOf('\n') + 1);
        int indent = first.length() + command.length() + 1;
        // Wrapped as if the heading were part of the line, then taken off again.
        String placeholder = "x".repeat(first.length());
        StringBuilder out = new StringBuilder();
        for (String line : lines(text)) {
            out.append(wrap(placeholder + line, indent));
            placeholder = "";
        }
        return out.substring(first.length());
    }

    /** Where the last cell of a table row starts: after a run of two or more spaces past the first cell. */
    private static int cellStart(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) == ' ') {
            i++;
        }
        int lead = i;
        while (i < line.length()) {
            if (line.charAt(i) == ' ' && i + 1 < line.length() && line.charAt(i + 1) == ' ') {
                int j = i;
                while (j < line.length() && line.charAt(j) == ' ') {
                    j++;
                }
                if (j < line.length() && line.charAt(j) != '\n') {
                    return j;
                }
                i = j;
            } else {
                i++;
            }
        }
        return lead;
    }

    /** The lines of {@code text}, each with its line separator. */
    private static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        int start = 0;
        while (start < text.length()) {
            int nl = text.indexOf('\n', start);
            int end = nl < 0 ? text.length() : nl + 1;
            out.add(text.substring(start, end));
            start = end;
        }
        return out;
    }

    /**
     * {@code line} wrapped to {@link #WIDTH} at spaces, continuation lines indented by {@code indent}. A
     * word is never split: one that does not fit the room left on a fresh line runs past the width.
     */
    static String wrap(String line, int indent) {
        String eol = line.endsWith("\r\n") ? "\r\n" : line.endsWith("\n") ? "\n" : "";
        String rest = line.substring(0, line.length() - eol.length());
        StringBuilder out = new StringBuilder();
        String pad = " ".repeat(indent);
        while (visible(rest) > WIDTH) {
            int cut = breakBefore(rest, indent);
            if (cut < 0) {
                break;
            }
            out.append(stripTrailing(rest.substring(0, cut))).append(eol.isEmpty() ? "\n" : eol);
            rest = pad + rest.substring(cut).stripLeading();
        }
        return out.append(rest).append(eol).toString();
    }

    /**
     * Where to break {@code s}: the last space that leaves the line within the width and has a word
     * before it past {@code indent}; else the first such space after the width (a word too long to fit); -1
     * when there is none.
     */
    private static int breakBefore(String s, int indent) {
        int fallback = -1;
        for (int i = s.length() - 1; i > indent; i--) {
            if (s.charAt(i) == ' ' && s.charAt(i - 1) != ' ') {
                if (visible(s.substring(0, i)) <= WIDTH) {
                    return i;
                }
                fallback = i;
            }
        }
        return fallback;
    }

    /** The length of {@code s} as a terminal shows it (picocli's ANSI styles take no columns). */
    private static int visible(String s) {
        return s.replaceAll("\u001B\\[[0-9;]*m", "").length();
    }

    private static String stripTrailing(String s) {
        int end = s.length();
        while (end > 0 && s.charAt(end - 1) == ' ') {
            end--;
        }
        return s.substring(0, end);
    }
}
