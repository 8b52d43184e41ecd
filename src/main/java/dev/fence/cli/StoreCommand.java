package dev.fence.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code fence store}: settings of the store itself, the same for every client. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "store",
        mixinStandardHelpOptions = true,
        description = {
            "Settings of the store itself, which every client shares (an admin's commands).",
            "A client's store URL can only ask for the store's own values, never change them."
        },
        subcommands = {StoreRetentionCommand.class})
final class StoreCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a store subcommand is required (retention)");
    }
}
