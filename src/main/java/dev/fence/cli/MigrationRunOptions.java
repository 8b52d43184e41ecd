package dev.fence.cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What {@code fence migrate apply} and {@code reapply} share: their help option, the database and
 * migrations ({@link MigrationOptions}), the grant and the store; each command adds its own {@code
 * --version}.
 */
final class MigrationRunOptions {
    // Not mixinStandardHelpOptions: its -V/--version would take the --version the commands need.
    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            description = "Show this help message and exit.")
    boolean help;

    @Mixin
    MigrationOptions migrations;

    @Mixin
    GrantOptions token;

    @Mixin
    StoreOption store;

    /** Runs the migrations (one {@code version}, or every pending one when null) or reapplies one. */
    int run(Context ctx, String version, boolean reapply) {
        return MigrateOutput.run(ctx, store, migrations, token, version, reapply);
    }
}
