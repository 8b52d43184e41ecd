package dev.fence.cli;

import dev.fence.json.Json;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;

/**
 * The entry point. The only class that touches the real process: {@code System.in/out/err},
 * {@code System.getenv()}, the system clock and {@code System.exit}.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals(Warmup.ARG)) {
            Warmup.run(System.getenv());
            return;
        }
        PrintWriter out = new ProcessStreams.Out(System.out);
        PrintWriter err = new ProcessStreams.Out(System.err, System.console() != null);
        Context ctx = new Context(
                new ProcessStreams.In(System.in),
                out,
                err,
                processEnv(),
                Clock.systemUTC(),
                Path.of("").toAbsolutePath());
        int code = run(ctx, args);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /**
     * The process environment. Daemons and git servers often run without {@code USER}; the OS account
     * name is then supplied, so plain-git hooks can still name the pusher.
     */
    private static Map<String, String> processEnv() {
        Map<String, String> env = System.getenv();
        if (env.get("USER") == null && env.get("LOGNAME") == null) {
            env = new java.util.HashMap<>(env);
            env.put("USER", System.getProperty("user.name", "unknown"));
        }
        return env;
    }

    /** Runs fence with the given streams and environment; returns the exit code. For tests. */
    public static int run(InputStream in, PrintWriter out, PrintWriter err, Map<String, String> env, String... args) {
        return run(new Context(in, out, err, env, Clock.systemUTC(), Path.of("").toAbsolutePath()), args);
    }

    /** Runs fence in {@code ctx}; returns the exit code. */
    public static int run(Context ctx, String... args) {
        try {
            Integer hook = HookRunner.fastPath(ctx, args);
            if (hook != null) {
                return hook;
            }
            CommandLine cl = commandLine(ctx);
            int code = cl.execute(args);
            ctx.out().flush();
            ctx.err().flush();
            return code;
        } finally {
            ctx.out().flush();
            ctx.err().flush();
        }
    }

    /** The configured command tree: factory, streams, exit codes and the one exception handler. */
    static CommandLine commandLine(Context ctx) {
        CommandLine cl = new CommandLine(new FenceCommand(), new CommandFactory(ctx));
        cl.setOut(ctx.out());
        cl.setErr(ctx.err());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExecutionExceptionHandler(Main::handleExecutionException);
        cl.setParameterExceptionHandler(Main::handleParameterException);
        Map<String, String> codes = new LinkedHashMap<>();
        for (ExitCode c : ExitCode.values()) {
            codes.put(String.format("%3d", c.code()), c.description());
        }
        applyExitCodes(cl, codes);
        return cl;
    }

    private static void applyExitCodes(CommandLine cl, Map<String, String> codes) {
        cl.getCommandSpec()
                .usageMessage()
                .exitCodeListHeading("%nExit codes:%n")
                .exitCodeList(codes);
        for (CommandLine sub : cl.getSubcommands().values()) {
            applyExitCodes(sub, codes);
        }
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
