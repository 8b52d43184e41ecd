package dev.fence.cli;

import dev.fence.hookpath.HookRunner;
import dev.fence.hookpath.ProcessEntry;
import dev.fence.hookpath.UtcMillisClock;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;

/**
 * The command line: the class the JVM starts, which hands the process to {@link ProcessEntry} (a hook or a
 * training run ends there) and runs every other command through picocli ({@link Cli}).
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        ProcessEntry.Started process = ProcessEntry.start(args);
        PrintWriter out = new ProcessStreams.Out(process.out());
        PrintWriter err = new ProcessStreams.Out(process.err(), () -> System.console() != null);
        Context ctx = new Context(
                new ProcessStreams.In(process.in()), out, err, process.env(), process.clock(), process.cwd());
        int code = run(ctx, args);
        process.exit(code);
    }

    /** Runs fence with the given streams and environment; returns the exit code. For tests. */
    public static int run(InputStream in, PrintWriter out, PrintWriter err, Map<String, String> env, String... args) {
        return run(
                new Context(
                        in, out, err, env, UtcMillisClock.INSTANCE, Path.of("").toAbsolutePath()),
                args);
    }

    /** Runs fence in {@code ctx}; returns the exit code. */
    public static int run(Context ctx, String... args) {
        try {
            Integer hook = HookRunner.fastPath(HookCommand.io(ctx), args);
            if (hook != null) {
                return hook;
            }
            // Only here are picocli's classes loaded: Cli links them, Main must not (see Cli).
            return Cli.execute(ctx, args);
        } finally {
            ctx.out().flush();
            ctx.err().flush();
        }
    }

    /** The configured command tree (for tests and the documentation generator). */
    static picocli.CommandLine commandLine(Context ctx) {
        return Cli.commandLine(ctx);
    }
}
