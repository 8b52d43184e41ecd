package dev.fence.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence migrate apply}. */
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
        name = "apply",
        description = {
            "Apply the pending migrations of DIR in version order (or only --version V) under your lease",
            "token, each in a transaction of its own that first claims the database's fence row. FENCED",
            "means nothing of that migration was applied: re-read and re-plan. A statement the database",
            "refuses is named by file and line (rolled back on PostgreSQL and SQLite)."
        })
final class MigrateApplyCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    MigrationRunOptions run;

    @Option(names = "--version", paramLabel = "V", description = "Apply only this version (the file's digits).")
    String version;

    MigrateApplyCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        return run.run(ctx, version, false);
    }
}
