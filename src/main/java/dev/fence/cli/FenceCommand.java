package dev.fence.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/** The root command: {@code fence}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "fence",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = {
            "Fencing tokens for git remotes shared by coding agents.",
            "",
            "A lease service grants leases with strictly increasing fencing tokens; agents push with"
                    + " -o fence=<token> -o fence-proof=<proof>; the git host's pre-receive hook refuses any push"
                    + " whose token has been superseded, with a FENCED message that tells the agent to stop,"
                    + " re-read and re-plan. Every grant and push decision lands in an audit ledger.",
            "",
            "Store: --store URL or FENCE_STORE (sqlite:<path>, redis://host:port[/db], rediss://...,"
                    + " redis-sentinel://host:port[,host:port...]/master-name[/db],"
                    + " postgresql://user@host:port/database);"
                    + " default: a SQLite file at ~/.local/share/fence/fence.db."
        },
        subcommands = {
            DemoCommand.class,
            LeaseCommand.class,
            MigrateCommand.class,
            WriteCommand.class,
            ReadCommand.class,
            PushCommand.class,
            ExecCommand.class,
            StatusCommand.class,
            McpCommand.class,
            IntegrateCommand.class,
            GuardCommand.class,
            HookCommand.class,
            InstallCommand.class,
            AuditCommand.class,
            ServeCommand.class,
            StoreCommand.class,
            DoctorCommand.class,
            BenchCommand.class,
            FaultsCommand.class
        })
final class FenceCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--verbose", scope = ScopeType.INHERIT, description = "Show stack traces of failures.")
    boolean verbose;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a subcommand is required");
    }
}
