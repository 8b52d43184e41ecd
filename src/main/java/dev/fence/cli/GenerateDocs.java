package dev.fence.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.codegen.docgen.manpage.ManPageGenerator;

/**
 * Build-time generator of the bash/zsh completion script, the AsciiDoc man page sources and the man pages
 * themselves ({@code man1/*.1}, roff written here from the same model, so that installing them needs no
 * document converter: {@code install -m 0644 -t /usr/local/share/man/man1 man1/*.1}), all read from the
 * same command model users run. The build calls it in the {@code package} phase (see {@code
 * pom.xml}); it is not part of the shipped jar, and it needs {@code picocli-codegen} on the class path.
 *
 * <p>The subcommands are built by {@link CommandFactory}, which needs a {@link Context}, so the picocli
 * generators cannot instantiate the command classes themselves; this class hands them a command tree built
 * with an inert context (no input, discarded output, empty environment). Nothing is executed.
 */
public final class GenerateDocs {
    private GenerateDocs() {}

    /**
     * Writes the completion script and the man page sources.
     *
     * @param args the completion script's path, then the directory for {@code *.adoc} man page sources (the
     *     man pages go to its {@code man1/}), then optionally the version the pages name
     * @throws IOException when a file cannot be written
     * @throws IllegalArgumentException when the arguments are not two paths
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2 && args.length != 3) {
            throw new IllegalArgumentException("usage: GenerateDocs COMPLETION_FILE MAN_DIR [VERSION]");
        }
        Path completion = Path.of(args[0]).toAbsolutePath();
        Path manDir = Path.of(args[1]).toAbsolutePath();
        CommandLine fence = commandLine();

        Files.createDirectories(completion.getParent());
        Files.writeString(completion, AutoComplete.bash("fence", fence), StandardCharsets.UTF_8);

        Files.createDirectories(manDir);
        // One page per command and subcommand (fence.adoc, fence-lease-acquire.adoc, ...); overwrite stale ones.
        int status =
                ManPageGenerator.generateManPage(manDir.toFile(), null, new boolean[0], true, fence.getCommandSpec());
        if (status != 0) {
            throw new IllegalStateException("man page generation failed with status " + status);
        }
        Path man1 = Files.createDirectories(manDir.resolve("man1"));
        writeManPages(fence, man1, "fence " + (args.length == 3 ? args[2] : "(development build)"));
    }

    /** One roff page per command: {@code fence.1}, {@code fence-lease-acquire.1}, … */
    static void writeManPages(CommandLine cl, Path dir, String version) throws IOException {
        String name = cl.getCommandSpec().qualifiedName("-");
        Files.writeString(dir.resolve(name + ".1"), manPage(cl, version), StandardCharsets.UTF_8);
        for (CommandLine sub : cl.getSubcommands().values()) {
            if (!sub.getCommandSpec().usageMessage().hidden()) {
                writeManPages(sub, dir, version);
            }
        }
    }

    /** The roff text of {@code cl}'s man page (man(7) macros). */
    static String manPage(CommandLine cl, String version) {
        CommandLine.Model.CommandSpec spec = cl.getCommandSpec();
        CommandLine.Model.UsageMessageSpec usage = spec.usageMessage();
        String name = spec.qualifiedName("-");
        StringBuilder out = new StringBuilder();
        out.append(".TH \"")
                .append(name.toUpperCase(java.util.Locale.ROOT))
                .append("\" \"1\" \"\" \"")
                .append(escape(version))
                .append("\" \"fence manual\"\n");
        // Words are never hyphenated or stretched: the pages name paths, URLs and commands to copy.
        out.append(".nh\n.ad l\n");
        String[] description = usage.description();
        out.append(".SH NAME\n")
                .append(name)
                .append(" \\- ")
                .append(escape(description.length > 0 ? firstSentence(description[0]) : spec.qualifiedName()))
                .append('\n');
        out.append(".SH SYNOPSIS\n.B ").append(escape(spec.qualifiedName())).append('\n');
        String synopsis = new CommandLine.Help(spec, CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF))
                .synopsis(0)
                .strip();
        String rest = synopsis.substring(
                        Math.min(synopsis.length(), spec.qualifiedName().length()))
                .strip();
        if (!rest.isEmpty()) {
            out.append(escape(rest.replaceAll("\\s+", " "))).append('\n');
        }
        out.append(".SH DESCRIPTION\n");
        paragraphs(out, description);
        List<CommandLine.Model.OptionSpec> options =
                spec.options().stream().filter(o -> !o.hidden()).toList();
        if (!options.isEmpty()) {
            out.append(".SH OPTIONS\n");
            for (CommandLine.Model.OptionSpec o : options) {
                out.append(".TP\n");
                List<String> names = new java.util.ArrayList<>();
                for (String n : o.names()) {
                    names.add("\\fB" + escape(n) + "\\fR");
                }
                out.append(String.join(", ", names));
                if (o.arity().max() > 0) {
                    out.append("=\\fI").append(escape(o.paramLabel())).append("\\fR");
                }
                out.append('\n')
                        .append(escape(String.join(" ", o.renderedDescription())))
                        .append('\n');
            }
        }
        List<CommandLine.Model.PositionalParamSpec> positionals =
                spec.positionalParameters().stream().filter(p -> !p.hidden()).toList();
        if (!positionals.isEmpty()) {
            out.append(".SH ARGUMENTS\n");
            for (CommandLine.Model.PositionalParamSpec p : positionals) {
                out.append(".TP\n\\fI")
                        .append(escape(p.paramLabel()))
                        .append("\\fR\n")
                        .append(escape(String.join(" ", p.renderedDescription())))
                        .append('\n');
            }
        }
        if (!cl.getSubcommands().isEmpty()) {
            out.append(".SH COMMANDS\n");
            for (Map.Entry<String, CommandLine> e : cl.getSubcommands().entrySet()) {
                String[] d = e.getValue().getCommandSpec().usageMessage().description();
                out.append(".TP\n\\fB")
                        .append(escape(e.getKey()))
                        .append("\\fR\n")
                        .append(escape(d.length > 0 ? d[0] : ""))
                        .append("\n.br\nSee \\fB")
                        .append(e.getValue().getCommandSpec().qualifiedName("-"))
                        .append("\\fR(1).\n");
            }
        }
        if (!usage.exitCodeList().isEmpty()) {
            out.append(".SH EXIT STATUS\n");
            for (Map.Entry<String, String> e : usage.exitCodeList().entrySet()) {
                out.append(".TP\n\\fB")
                        .append(escape(e.getKey().strip()))
                        .append("\\fR\n")
                        .append(escape(e.getValue()))
                        .append('\n');
            }
        }
        if (usage.footer().length > 0) {
            out.append(".SH EXAMPLES\n.nf\n");
            for (String line : usage.footer()) {
                out.append(escape(line.replace("%n", ""))).append('\n');
            }
            out.append(".fi\n");
        }
        CommandLine.Model.CommandSpec parent = spec.parent();
        if (parent != null) {
            out.append(".SH SEE ALSO\n\\fB").append(parent.qualifiedName("-")).append("\\fR(1)\n");
        }
        return out.toString();
    }

    /** Description elements as paragraphs; indented elements (examples) as unfilled lines. */
    private static void paragraphs(StringBuilder out, String[] description) {
        boolean example = false;
        for (String line : description) {
            if (line.isBlank()) {
                continue;
            }
            boolean indented = line.startsWith(" ");
            if (indented && !example) {
                out.append(".PP\n.nf\n");
            } else if (!indented && example) {
                out.append(".fi\n");
            }
            if (!indented) {
                out.append(".PP\n");
            }
            out.append(escape(line.replace("%n", " ").strip())).append('\n');
            example = indented;
        }
        if (example) {
            out.append(".fi\n");
        }
    }

    private static String firstSentence(String text) {
        int end = text.indexOf(". ");
        return end < 0 ? text.replaceAll("[.]$", "") : text.substring(0, end);
    }

    /**
     * {@code text} as roff text: backslashes and minus signs escaped (a plain {@code -} may print as a
     * hyphen, and a pasted option would then not work), characters beyond ASCII by code point, and a leading
     * dot or quote kept from reading as a request.
     */
    static String escape(String text) {
        StringBuilder b = new StringBuilder();
        text.codePoints().forEach(c -> {
            if (c == '\\') {
                b.append("\\e");
            } else if (c == '-') {
                b.append("\\-");
            } else if (c > 126) {
                // Named by code point, as groff reads it whatever the input encoding.
                b.append(String.format("\\[u%04X]", c));
            } else {
                b.appendCodePoint(c);
            }
        });
        String t = b.toString();
        return t.startsWith(".") || t.startsWith("'") ? "\\&" + t : t;
    }

    /** The real command tree, built with a context that reads nothing and writes nowhere. */
    static CommandLine commandLine() {
        PrintWriter discard = new PrintWriter(Writer.nullWriter());
        Context inert =
                new Context(InputStream.nullInputStream(), discard, discard, Map.of(), Clock.systemUTC(), Path.of("/"));
        return Main.commandLine(inert);
    }
}
