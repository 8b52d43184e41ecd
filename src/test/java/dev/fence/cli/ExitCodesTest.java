package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.ProcessTest;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Exit codes as scripts see them: each command's --help lists exactly the codes it declares, {@code fence
 * exec} never passes on a command's status where it could be read as one of fence's own, and a port in use
 * is the operator's problem (6), not a bug in fence (70).
 */
@ProcessTest
class ExitCodesTest {
    @TempDir
    Path tmp;

    record Run(int exit, String out, String err) {}

    private Run fence(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out, true),
                new PrintWriter(err, true),
                Map.of(
                        "HOME", tmp.toString(),
                        "PATH", System.getenv("PATH"),
                        "FENCE_STORE", "sqlite:" + tmp.resolve("fence.db")),
                Clock.systemUTC(),
                tmp);
        int exit = Main.run(ctx, args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void everyCommandsHelpListsExactlyTheCodesItDeclares() {
        PrintWriter discard = new PrintWriter(new StringWriter());
        CommandLine root = Cli.commandLine(
                new Context(new ByteArrayInputStream(new byte[0]), discard, discard, Map.of(), Clock.systemUTC(), tmp));
        Deque<CommandLine> todo = new ArrayDeque<>(List.of(root));
        int commands = 0;
        while (!todo.isEmpty()) {
            CommandLine cl = todo.poll();
            todo.addAll(cl.getSubcommands().values());
            commands++;
            String name = cl.getCommandSpec().qualifiedName();
            ExitCodes declared = Cli.exitCodesOf(cl);
            List<ExitCode> codes = List.of(declared.value());
            assertTrue(codes.contains(ExitCode.OK) && codes.contains(ExitCode.USAGE), name + ": --help and usage");
            String help = cl.getUsageMessage(CommandLine.Help.Ansi.OFF);
            String section = help.substring(help.indexOf("Exit codes:"));
            Matcher m = Pattern.compile("(?m)^\\s+(\\d+)\\s+(\\S.*)$").matcher(section);
            List<Integer> listed = new ArrayList<>();
            while (m.find()) {
                listed.add(Integer.parseInt(m.group(1)));
            }
            assertEquals(codes.stream().map(ExitCode::code).toList(), listed, name + ":\n" + help);
            for (ExitCode c : codes) {
                assertTrue(section.contains(c.description().substring(0, 20)), name + ": " + c + "\n" + section);
            }
            assertEquals(name.equals("fence exec"), section.contains("any "), name + ":\n" + section);
        }
        assertTrue(commands > 25, "walked " + commands + " commands");
        // A command that only groups others never ran anything that could fail.
        assertEquals(
                List.of(ExitCode.OK, ExitCode.USAGE),
                List.of(Cli.exitCodesOf(root).value()));
    }

    /** A proof of the right shape (renew and release want one before they ask the store). */
    private static final String PROOF = "fp2.x.YQ." + "A".repeat(43);

    /** Tries to make each store command return a code its --help does not list: a store down, a bad URL. */
    @Test
    void storeFailuresComeOutAsCodesTheCommandDeclares() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        PrintWriter discard = new PrintWriter(new StringWriter());
        CommandLine root = Cli.commandLine(
                new Context(new ByteArrayInputStream(new byte[0]), discard, discard, Map.of(), Clock.systemUTC(), tmp));
        List<List<String>> commands = List.of(
                List.of("lease", "acquire", "--resource", "x", "--holder", "a"),
                List.of(
                        "lease",
                        "renew",
                        "--resource",
                        "x",
                        "--holder",
                        "a",
                        "--token",
                        "1",
                        "--proof",
                        PROOF,
                        "--ttl",
                        "30s"),
                List.of("lease", "release", "--resource", "x", "--holder", "a", "--token", "1", "--proof", PROOF),
                List.of("lease", "status", "--resource", "x"),
                List.of("status", "--holder", "a"),
                List.of("audit"),
                List.of("store", "retention"),
                List.of("doctor"));
        Map<String, Integer> stores = Map.of("redis://127.0.0.1:" + closed, 5, "bogus:x", 6);
        for (List<String> command : commands) {
            CommandLine cl = root;
            for (String word : command) {
                if (word.startsWith("-")) {
                    break;
                }
                cl = cl.getSubcommands().get(word);
            }
            List<Integer> declared = List.of(Cli.exitCodesOf(cl).value()).stream()
                    .map(ExitCode::code)
                    .toList();
            for (var store : stores.entrySet()) {
                List<String> args = new ArrayList<>(command);
                args.addAll(List.of("--store", store.getKey()));
                Run r = fence(args.toArray(String[]::new));
                String what = String.join(" ", args) + " -> " + r.exit() + "\n" + r.out() + r.err();
                assertTrue(declared.contains(r.exit()), what + "\nnot in " + declared);
                // doctor reports an unreachable store as a finding of a bad set-up.
                int expected = command.get(0).equals("doctor") ? 6 : store.getValue();
                assertEquals(expected, r.exit(), what);
            }
        }
    }

    @Test
    void helpAsUsersSeeItShowsTheCommandsOwnCodesOnly() {
        Run r = fence("lease", "status", "--help");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("Exit codes:"), r.out());
        assertFalse(r.out().contains("FENCED:"), r.out());
        assertFalse(r.out().contains("Busy:"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\s+5\\s+The store .*")), r.out());
    }

    @Test
    void aCommandsOwnExit3IsNotReadAsFenced() {
        Run r = fence("exec", "--resource", "tools/x", "--holder", "agent-a", "--", "sh", "-c", "echo out; exit 3");
        assertEquals(ExitCode.COMMAND_FAILED.code(), r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("out"), r.out());
        List<String> lines = r.err().lines().toList();
        assertEquals("fence exec: exit=125 child-exit=3", lines.get(lines.size() - 1), r.err());
        assertFalse(r.err().contains("FENCED"), r.err());
    }

    @Test
    void statusesFenceDoesNotUseItselfPassThroughWithoutAStatusLine() {
        for (int status : new int[] {0, 1, 7, 42, 126}) {
            // A resource each: the lease a run acquires outlives it, and exec never takes it again.
            Run r = fence(
                    "exec",
                    "--resource",
                    "tools/x" + status,
                    "--holder",
                    "agent-a",
                    "--",
                    "sh",
                    "-c",
                    "exit " + status);
            assertEquals(status, r.exit(), r.err());
            assertFalse(r.err().contains("child-exit"), r.err());
        }
        for (int status : new int[] {2, 3, 4, 5, 6, 70, 125}) {
            assertEquals(125, ExecCommand.exitCode(status), "status " + status);
        }
    }

    @Test
    void aPortInUseIsABadConfigurationNotABug() throws Exception {
        Path credentials = tmp.resolve("credentials");
        Files.writeString(credentials, "");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String listen = "127.0.0.1:" + taken.getLocalPort();
            Run r = fence("serve", "--listen", listen, "--credentials", credentials.toString());
            assertEquals(ExitCode.CONFIG.code(), r.exit(), r.out() + r.err());
            assertTrue(r.err().contains("fence: cannot listen on " + listen + ": "), r.err());
            assertTrue(r.err().contains("Address already in use"), r.err());
            assertFalse(r.err().contains("internal error"), r.err());
        }
    }
}
