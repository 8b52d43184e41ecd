package dev.fence.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code fence migrate}: fenced database migrations. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "migrate",
        mixinStandardHelpOptions = true,
        description = {
            "Apply plain SQL migrations (DIR/NNNN_name.sql) under a lease token.",
            "The lease store checks the token as the git hook does, and the database checks it again:",
            "the resource's row in fence_tokens is claimed with token <= :token in the migration's own",
            "transaction (PostgreSQL, SQLite), or just before it (MariaDB/MySQL). A stale token is",
            "FENCED (exit 3) and nothing is applied."
        },
        subcommands = {MigrateApplyCommand.class, MigrateReapplyCommand.class, MigrateStatusCommand.class})
final class MigrateCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a migrate subcommand is required (apply, reapply, status)");
    }
}
