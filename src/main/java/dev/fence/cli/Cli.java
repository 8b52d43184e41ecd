package dev.fence.cli;

import dev.fence.core.Printable;
import dev.fence.git.JvmCharset;
import dev.fence.json.Json;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;

/**
 * Every command but the hook's fast path, through picocli. Kept out of {@link Main} so that merely
 * verifying {@code Main} (which every run does) links none of picocli's classes: picocli's jar is Java 5
 * bytecode that class-data sharing cannot archive, so each class it loads costs a push time.
 */
final class Cli {
    private Cli() {}

    /** Parses and runs {@code args}; returns the exit code. */
    static int execute(Context ctx, String... args) {
        String unread = unreadArgument(args);
        if (unread != null) {
            ctx.err().println("fence: " + unread);
            ctx.err().flush();
            return ExitCode.USAGE.code();
        }
        CommandLine cl = commandLine(ctx);
        int code = cl.execute(args);
        ctx.out().flush();
        ctx.err().flush();
        return code;
    }

    /**
     * What is wrong with the first argument the JVM may have read as other text than was meant ({@link
     * JvmCharset#misread}), or null: such an argument would name a lease, a ref or a file nobody meant, and
     * is refused, never used.
     */
    static String unreadArgument(String... args) {
        for (int i = 0; i < args.length; i++) {
            String why = JvmCharset.misread(args[i]);
            if (why != null) {
                return "argument " + (i + 1) + " ('" + Printable.escape(args[i], 200) + "'): " + why;
            }
        }
        return null;
    }

    /** The configured command tree: factory, streams, exit codes and the one exception handler. */
    static CommandLine commandLine(Context ctx) {
        CommandLine cl = new CommandLine(new FenceCommand(), new CommandFactory(ctx));
        cl.setOut(ctx.out());
        cl.setErr(ctx.err());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExecutionExceptionHandler(Cli::handleExecutionException);
        cl.setParameterExceptionHandler(Cli::handleParameterException);
        applyExitCodes(cl);
        return cl;
    }

    /** Each command's exit codes in its --help: those its {@link ExitCodes} names, nothing else. */
    private static void applyExitCodes(CommandLine cl) {
        var usage = cl.getCommandSpec().usageMessage();
        usage.exitCodeListHeading("%nExit codes:%n").exitCodeList(exitCodeList(exitCodesOf(cl)));
        usage.description(reflow(usage.description()));
        HelpWrap.apply(cl);
        for (CommandLine sub : cl.getSubcommands().values()) {
            applyExitCodes(sub);
        }
    }

    /** The command's declared exit codes; a command without a declaration is a bug in fence. */
    static ExitCodes exitCodesOf(CommandLine cl) {
        Object command = cl.getCommandSpec().userObject();
        ExitCodes declared = command == null ? null : command.getClass().getAnnotation(ExitCodes.class);
        if (declared == null) {
            throw new IllegalStateException(cl.getCommandSpec().qualifiedName() + " does not declare its exit codes");
        }
        return declared;
    }

    private static Map<String, String> exitCodeList(ExitCodes declared) {
        Map<String, String> codes = new LinkedHashMap<>();
        for (ExitCode c : declared.value()) {
            codes.put(String.format("%3d", c.code()), c.description());
        }
        if (!declared.otherwise().isEmpty()) {
            codes.put("any", declared.otherwise());
        }
        return codes;
    }

    /**
     * Joins a command description's source lines into paragraphs, which picocli then wraps to the help
     * width: descriptions are written as lines of source, and printed line for line they would break
     * wherever the source did as well as where the terminal does. A new line starts after an empty
     * element or one ending in a colon, and at an empty element, an option ({@code --…}) or an indented
     * example.
     */
    static String[] reflow(String[] lines) {
        java.util.List<String> out = new java.util.ArrayList<>();
        String previous = null;
        for (String line : lines) {
            boolean joins = previous != null
                    && !previous.isEmpty()
                    && !line.isEmpty()
                    && !previous.endsWith(":")
                    && !previous.startsWith(" ")
                    && !line.startsWith(" ")
                    && !line.startsWith("--");
            if (joins) {
                out.set(out.size() - 1, out.get(out.size() - 1) + " " + line);
            } else {
                out.add(line);
            }
            previous = line;
        }
        return out.toArray(new String[0]);
    }

    private static int handleExecutionException(
            Exception ex, CommandLine commandLine, CommandLine.ParseResult parseResult) {
        ExitCode code = Failures.exitCodeOf(ex);
        PrintWriter err = commandLine.getErr();
        err.println("fence: " + Failures.messageOf(ex));
        if (matched(parseResult, "--verbose")) {
            ex.printStackTrace(err);
        }
        if (matched(parseResult, "--json")) {
            Map<String, Object> m = Json.object();
            m.put("status", "error");
            m.put("exitCode", code.code());
            m.put("message", Failures.messageOf(ex));
            commandLine.getOut().println(Json.write(m));
        }
        return code.code();
    }

    private static int handleParameterException(CommandLine.ParameterException ex, String[] args) {
        CommandLine cl = ex.getCommandLine();
        PrintWriter err = cl.getErr();
        err.println("fence: " + ex.getMessage());
        if (!CommandLine.UnmatchedArgumentException.printSuggestions(ex, err)) {
            err.println("Try '" + cl.getCommandSpec().qualifiedName() + " --help' for more information.");
        }
        return ExitCode.USAGE.code();
    }

    private static boolean matched(CommandLine.ParseResult parseResult, String option) {
        if (parseResult == null) {
            return false;
        }
        for (CommandLine c : parseResult.asCommandLineList()) {
            if (c.getParseResult() != null && c.getParseResult().hasMatchedOption(option)) {
                return true;
            }
        }
        return false;
    }
}
