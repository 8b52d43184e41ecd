package dev.fence.cli;

import dev.fence.core.ConfigException;
import dev.fence.core.InvalidInputException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * A stand-in for the real root command, for testing subcommands as users run them ({@code fence install
 * …}). It maps fence's exceptions to exit codes the way the real root is expected to.
 */
@Command(name = "fence", mixinStandardHelpOptions = true)
final class TestRootCommand implements Runnable {
    @Override
    public void run() {}

    /** The result of one run: exit code and everything printed. */
    record Run(int exit, String out, String err) {}

    static Run run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new TestRootCommand()).addSubcommand(new InstallCommand(env));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("fence: " + e.getMessage());
            return e instanceof InvalidInputException
                    ? ExitCode.USAGE.code()
                    : e instanceof ConfigException ? ExitCode.CONFIG.code() : ExitCode.INTERNAL.code();
        });
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }
}
