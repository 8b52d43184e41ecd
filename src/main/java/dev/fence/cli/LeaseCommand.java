package dev.fence.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code fence lease}: the lease operations. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "lease",
        mixinStandardHelpOptions = true,
        description = {
            "Acquire, renew, release and inspect leases.",
            "A lease gives its holder a fencing token; pushes carry the token and its proof, and the",
            "git host's hook refuses tokens that have been superseded."
        },
        subcommands = {
            LeaseAcquireCommand.class,
            LeaseRenewCommand.class,
            LeaseReleaseCommand.class,
            LeaseStatusCommand.class
        })
final class LeaseCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(
                spec.commandLine(), "a lease subcommand is required (acquire, renew, release, status)");
    }
}
