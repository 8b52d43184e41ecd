package dev.fence.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence migrate reapply}. */
@ExitCodes({
    ExitCode.OK,
    ExitCode.REJECTED,
    ExitCode.USAGE,
    ExitCode.FENCED,
    ExitCode.STORE_UNAVAILABLE,
    ExitCode.CONFIG,
    ExitCode.INTERNAL
})
@Command(
        name = "reapply",
        description = {
            "Run an applied version's file again. Legal only for a version applied under your own token:",
            "a version another token applied is FENCED (exit 3); the fence row is claimed first, as for",
            "apply."
        })
final class MigrateReapplyCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    MigrationRunOptions run;

    @Option(
            names = "--version",
            required = true,
            paramLabel = "V",
            description = "The version to reapply (the file's digits).")
    String version;

    MigrateReapplyCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        return run.run(ctx, version, true);
    }
}
