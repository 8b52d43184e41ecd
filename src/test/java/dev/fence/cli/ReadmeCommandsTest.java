package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every {@code fence …} command shown in README.md's shell code blocks is a command fence understands:
 * its subcommand path answers {@code --help} with exit 0, and every option it uses exists on that
 * subcommand. Deliberately strict: a command documented before it is built fails here until it lands.
 */
class ReadmeCommandsTest {
    private static final Path README = Path.of("README.md");

    /** Code blocks with these info strings hold shell commands; "console" blocks only on "$ " lines. */
    private static final Set<String> SHELL_BLOCKS = Set.of("", "sh", "bash", "shell", "console");

    /** Every top-level command the README must show at least once. */
    private static final List<String> DOCUMENTED = List.of(
            "demo", "lease", "exec", "push", "status", "guard", "hook", "install", "serve", "audit", "bench", "faults",
            "doctor", "migrate", "write", "read");

    @TempDir
    Path home;

    @TestFactory
    Stream<DynamicTest> everyFenceCommandInTheReadmeParses() throws IOException {
        List<Invocation> invocations = extract(Files.readString(README));
        assertFalse(invocations.isEmpty(), "found no fence commands in " + README);
        return invocations.stream()
                .map(inv -> dynamicTest("README.md:" + inv.line() + ": " + inv.text(), () -> check(inv)));
    }

    @Test
    void theFirstCommandIsTheDemoAndEveryCommandIsShown() throws IOException {
        List<Invocation> invocations = extract(Files.readString(README));
        assertFalse(invocations.isEmpty(), "found no fence commands in " + README);
        assertEquals(List.of("demo"), invocations.get(0).args(), "the README's first command must be bin/fence demo");
        Set<String> shown = new TreeSet<>();
        invocations.forEach(
                inv -> shown.add(inv.args().isEmpty() ? "" : inv.args().get(0)));
        for (String command : DOCUMENTED) {
            assertTrue(shown.contains(command), "the README shows no 'fence " + command + "' command; shown: " + shown);
        }
    }

    @Test
    void extractorFindsFenceInPipelinesSubstitutionsAndJavaJar() {
        String md = String.join(
                "\n",
                "text fence lease acquire outside a block",
                "```sh",
                "# bin/fence lease renew in a comment",
                "TOKEN=$(bin/fence lease acquire --resource r --holder a --json | jq -r .token)",
                "FENCE_STORE=sqlite:/tmp/x.db fence audit timeline \\",
                "  --repo app --ref main 2>/dev/null",
                "sudo -u git -- /opt/fence/bin/fence install --bare /srv/git/app.git",
                "exec java -XX:+UseSerialGC -jar /opt/fence/fence.jar hook pre-receive",
                "git push -o fence=1 origin main && echo 'fence demo'",
                "```",
                "```text",
                "fence lease status in an output block",
                "```",
                "```console",
                "$ bin/fence demo",
                "fence bench (output line)",
                "```");
        List<List<String>> args = extract(md).stream().map(Invocation::args).toList();
        assertEquals(
                List.of(
                        List.of("lease", "acquire", "--resource", "r", "--holder", "a", "--json"),
                        List.of("audit", "timeline", "--repo", "app", "--ref", "main"),
                        List.of("install", "--bare", "/srv/git/app.git"),
                        List.of("hook", "pre-receive"),
                        List.of("demo")),
                args);
        assertEquals(4, extract(md).get(0).line());
    }

    private void check(Invocation inv) {
        List<String> path = new ArrayList<>();
        for (String arg : inv.args()) {
            if (arg.startsWith("-")) {
                break;
            }
            path.add(arg);
        }
        CommandSpec spec = leaf(path, inv.line());
        List<String> helpArgs = new ArrayList<>(path);
        helpArgs.add("--help");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(
                InputStream.nullInputStream(),
                new PrintWriter(out, true),
                new PrintWriter(err, true),
                Map.of("HOME", home.toString()),
                helpArgs.toArray(String[]::new));
        assertEquals(0, exit, "fence " + String.join(" ", helpArgs) + " failed:\n" + err);

        List<String> unknown = new ArrayList<>();
        List<String> rest = inv.args().subList(path.size(), inv.args().size());
        for (int i = 0; i < rest.size(); i++) {
            String arg = rest.get(i);
            if (arg.equals("--")) {
                break; // the rest belongs to a child command (fence exec ... -- CMD)
            }
            if (!arg.startsWith("-") || arg.equals("-")) {
                continue;
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            OptionSpec option = spec.findOption(name);
            if (option == null) {
                unknown.add(name);
            } else if (eq < 0 && option.arity().max() > 0) {
                i++; // skip the option's value
            }
        }
        if (!unknown.isEmpty()) {
            fail("fence " + String.join(" ", path) + " has no option " + String.join(", ", unknown) + " (README.md:"
                    + inv.line() + ")");
        }
    }

    /**
     * The command the path names. Words after the last subcommand must be positional arguments of that
     * command: picocli answers {@code --help} with exit 0 even after an unknown word, so an unknown
     * subcommand is caught here.
     */
    private CommandSpec leaf(List<String> path, int line) {
        PrintWriter discard = new PrintWriter(new StringWriter());
        CommandLine cl = Main.commandLine(new Context(
                InputStream.nullInputStream(),
                discard,
                discard,
                Map.of("HOME", home.toString()),
                Clock.systemUTC(),
                home));
        List<String> walked = new ArrayList<>(List.of("fence"));
        for (String name : path) {
            CommandLine sub = cl.getSubcommands().get(name);
            if (sub == null) {
                if (cl.getCommandSpec().positionalParameters().isEmpty()) {
                    fail(String.join(" ", walked) + " has no subcommand '" + name + "' (README.md:" + line
                            + "); its subcommands: " + cl.getSubcommands().keySet());
                }
                break;
            }
            cl = sub;
            walked.add(name);
        }
        return cl.getCommandSpec();
    }

    /** One fence invocation in the README: where, the command as written, and fence's own arguments. */
    record Invocation(int line, String text, List<String> args) {}

    /** Every fence invocation in the shell code blocks of {@code markdown}, in order. */
    static List<Invocation> extract(String markdown) {
        List<Invocation> found = new ArrayList<>();
        String[] lines = markdown.split("\n", -1);
        String fence = null; // the open code fence, or null outside blocks
        boolean shell = false;
        boolean console = false;
        StringBuilder command = new StringBuilder();
        int commandLine = 0;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            String stripped = line.strip();
            if (fence == null) {
                if (stripped.startsWith("```") || stripped.startsWith("~~~")) {
                    fence = stripped.substring(0, 3);
                    String info = stripped.substring(3).strip();
                    int space = info.indexOf(' ');
                    info = (space < 0 ? info : info.substring(0, space)).toLowerCase(Locale.ROOT);
                    shell = SHELL_BLOCKS.contains(info);
                    console = info.equals("console");
                }
                continue;
            }
            if (stripped.startsWith(fence)) {
                fence = null;
                continue;
            }
            if (!shell) {
                continue;
            }
            if (command.length() == 0) {
                if (console) {
                    if (!stripped.startsWith("$ ")) {
                        continue;
                    }
                    stripped = stripped.substring(2);
                }
                commandLine = i + 1;
            }
            if (stripped.endsWith("\\")) {
                command.append(stripped, 0, stripped.length() - 1).append(' ');
                continue;
            }
            command.append(stripped);
            for (List<String> segment : Shell.segments(command.toString())) {
                List<String> args = fenceArgs(segment);
                if (args != null) {
                    found.add(new Invocation(commandLine, command.toString().strip(), args));
                }
            }
            command.setLength(0);
        }
        return found;
    }

    /** fence's arguments when {@code words} runs fence, else null. */
    private static List<String> fenceArgs(List<String> words) {
        int i = 0;
        while (i < words.size()) {
            String w = words.get(i);
            if (w.matches("[A-Za-z_][A-Za-z0-9_]*=.*") || w.equals("exec") || w.equals("time")) {
                i++;
            } else if (w.equals("sudo")) {
                i++;
                while (i < words.size() && words.get(i).startsWith("-")) {
                    String opt = words.get(i++);
                    if (opt.equals("--")) {
                        break;
                    }
                    if (opt.equals("-u") || opt.equals("-g")) {
                        i++;
                    }
                }
            } else {
                break;
            }
        }
        if (i >= words.size()) {
            return null;
        }
        String cmd = words.get(i);
        if (cmd.equals("fence") || cmd.endsWith("/fence")) {
            return List.copyOf(words.subList(i + 1, words.size()));
        }
        if (cmd.equals("java") || cmd.endsWith("/java")) {
            for (int j = i + 1; j + 1 < words.size(); j++) {
                if (words.get(j).equals("-jar") && words.get(j + 1).endsWith("fence.jar")) {
                    return List.copyOf(words.subList(j + 2, words.size()));
                }
            }
        }
        return null;
    }

    /**
     * Just enough of the shell's word splitting to find commands: quotes, backslashes, comments,
     * redirections, and the operators that start a new command ({@code | || && ; & $( ( ) `}).
     */
    static final class Shell {
        private Shell() {}

        static List<List<String>> segments(String text) {
            List<List<String>> segments = new ArrayList<>();
            List<String> words = new ArrayList<>();
            StringBuilder word = new StringBuilder();
            boolean inWord = false;
            boolean skipNextWord = false; // the target of a redirection
            int i = 0;
            while (i < text.length()) {
                char c = text.charAt(i);
                if (c == '\'' || c == '"') {
                    int end = text.indexOf(c, i + 1);
                    if (end < 0) {
                        end = text.length();
                    }
                    String quoted = text.substring(i + 1, end);
                    word.append(c == '"' ? quoted.replaceAll("\\\\([\"\\\\$`])", "$1") : quoted);
                    inWord = true;
                    i = end + 1;
                    continue;
                }
                if (c == '\\' && i + 1 < text.length()) {
                    word.append(text.charAt(i + 1));
                    inWord = true;
                    i += 2;
                    continue;
                }
                boolean operator = c == '|' || c == '&' || c == ';' || c == '(' || c == ')' || c == '`';
                boolean substitution = c == '$' && i + 1 < text.length() && text.charAt(i + 1) == '(';
                boolean redirection = c == '>' || c == '<';
                boolean comment = c == '#' && !inWord;
                if (Character.isWhitespace(c) || operator || substitution || redirection || comment) {
                    if (inWord) {
                        String w = word.toString();
                        word.setLength(0);
                        inWord = false;
                        if (redirection && w.matches("[0-9]+")) {
                            // "2>": a file descriptor, not a word
                        } else if (skipNextWord) {
                            skipNextWord = false;
                        } else {
                            words.add(w);
                        }
                    }
                    if (comment) {
                        break;
                    }
                    if (redirection) {
                        skipNextWord = true;
                        i++;
                        while (i < text.length() && (text.charAt(i) == '>' || text.charAt(i) == '&')) {
                            i++;
                        }
                        continue;
                    }
                    if (operator || substitution) {
                        if (!words.isEmpty()) {
                            segments.add(words);
                        }
                        words = new ArrayList<>();
                        i += substitution ? 2 : 1;
                        continue;
                    }
                    i++;
                    continue;
                }
                word.append(c);
                inWord = true;
                i++;
            }
            if (inWord && !skipNextWord) {
                words.add(word.toString());
            }
            if (!words.isEmpty()) {
                segments.add(words);
            }
            return segments;
        }
    }
}
