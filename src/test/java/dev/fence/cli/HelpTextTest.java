package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every command's --help reads as wrapped paragraphs, not as lines broken where the source was. */
class HelpTextTest {
    @Test
    void sourceLinesJoinIntoParagraphsButListsAndExamplesKeepTheirLines() {
        assertArrayEquals(
                new String[] {
                    "First sentence, continued here. Second.",
                    "",
                    "Options:",
                    "--a does this",
                    "--b does that and goes on.",
                    "",
                    "Example:",
                    "  fence demo",
                    "  fence demo --server auto"
                },
                Cli.reflow(new String[] {
                    "First sentence,",
                    "continued here.",
                    "Second.",
                    "",
                    "Options:",
                    "--a does this",
                    "--b does that",
                    "and goes on.",
                    "",
                    "Example:",
                    "  fence demo",
                    "  fence demo --server auto"
                }));
    }

    @Test
    void noHelpLineIsAFragmentOfAWrappedSentence() {
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()),
                Map.of(),
                Clock.systemUTC(),
                Path.of("").toAbsolutePath());
        CommandLine root = Cli.commandLine(ctx);
        Deque<CommandLine> todo = new ArrayDeque<>();
        todo.add(root);
        int commands = 0;
        while (!todo.isEmpty()) {
            CommandLine cl = todo.poll();
            todo.addAll(cl.getSubcommands().values());
            commands++;
            String[] description = cl.getCommandSpec().usageMessage().description();
            for (int i = 1; i < description.length; i++) {
                String previous = description[i - 1];
                String line = description[i];
                boolean continues = !previous.isEmpty()
                        && !line.isEmpty()
                        && !previous.endsWith(":")
                        && !previous.startsWith(" ")
                        && !line.startsWith(" ")
                        && !line.startsWith("--");
                assertTrue(!continues, cl.getCommandName() + ": '" + line + "' continues '" + previous + "'");
            }
        }
        assertTrue(commands > 15, "walked " + commands + " commands");
        String help = root.getSubcommands().get("serve").getUsageMessage();
        assertTrue(help.contains("Run the fence HTTP API (docs/api.md): leases, hook verdicts for curl shims,"), help);
        assertEquals(-1, help.indexOf("ledger queries,\n/healthz"), help);
    }

    /**
     * Every path, URL, dotted name or command word the help text is written with reaches the reader whole:
     * picocli's own wrapping broke lines after dots and slashes inside words ({@code fence.} / {@code conf}).
     */
    @Test
    void everyCommandsHelpKeepsEachPathUrlAndWordWhole() {
        CommandLine root = Cli.commandLine(new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()),
                Map.of(),
                Clock.systemUTC(),
                Path.of("").toAbsolutePath()));
        Deque<CommandLine> todo = new ArrayDeque<>(java.util.List.of(root));
        int checked = 0;
        while (!todo.isEmpty()) {
            CommandLine cl = todo.poll();
            todo.addAll(cl.getSubcommands().values());
            String help = cl.getUsageMessage(CommandLine.Help.Ansi.OFF);
            java.util.Set<String> rendered = new java.util.HashSet<>(java.util.List.of(help.split("\\s+")));
            java.util.List<String> written = new java.util.ArrayList<>();
            var usage = cl.getCommandSpec().usageMessage();
            written.addAll(java.util.List.of(usage.description()));
            written.addAll(java.util.List.of(usage.header()));
            written.addAll(java.util.List.of(usage.footer()));
            for (var option : cl.getCommandSpec().options()) {
                written.addAll(java.util.List.of(option.description()));
            }
            for (String text : written) {
                for (String word : text.split("\\s+")) {
                    boolean joined = word.contains("/") || word.matches(".*\\w[.]\\w.*");
                    boolean templated = word.contains("$") || word.contains("%") || word.contains("@|");
                    if (joined && !templated) {
                        checked++;
                        assertTrue(
                                rendered.contains(word),
                                cl.getCommandSpec().qualifiedName() + " --help split '" + word + "':\n" + help);
                    }
                }
            }
        }
        assertTrue(checked > 100, "checked " + checked + " words");
    }
}
