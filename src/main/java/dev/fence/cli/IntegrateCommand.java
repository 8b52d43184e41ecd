package dev.fence.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code fence integrate}: wire fence into an agent's harness. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "integrate",
        mixinStandardHelpOptions = true,
        description = {"Wire fence into an agent harness's own configuration."},
        subcommands = {IntegrateClaudeCodeCommand.class})
final class IntegrateCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "name the harness: fence integrate claude-code");
    }
}
