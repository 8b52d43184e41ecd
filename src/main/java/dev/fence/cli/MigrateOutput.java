package dev.fence.cli;

import dev.fence.core.FencedMessage;
import dev.fence.core.FencedWrites;
import dev.fence.core.LeaseStore;
import dev.fence.core.Printable;
import dev.fence.migrate.Migrator;
import dev.fence.migrate.Migrator.Outcome;

/** Runs {@code fence migrate apply|reapply} and prints its outcome; the exit code of each outcome. */
final class MigrateOutput {
    private MigrateOutput() {}

    static int run(
            Context ctx,
            StoreOption store,
            MigrationOptions migrations,
            GrantOptions token,
            String version,
            boolean reapply) {
        GrantOptions.Held held =
                token.require(ctx, migrations.resource, reapply ? "fence migrate reapply" : "fence migrate apply");
        var request = new Migrator.Request(
                migrations.database(ctx),
                migrations.directory(ctx),
                version,
                reapply,
                migrations.resource,
                held.holder(),
                held.token(),
                held.proof(),
                migrations.dir);
        Outcome outcome;
        try (LeaseStore leases = store.open(ctx)) {
            outcome = new Migrator(new FencedWrites(leases, ctx.clock())).run(request);
        }
        for (Migrator.Applied a : outcome.applied()) {
            ctx.out().println((a.reapplied() ? "reapplied " : "applied ") + a.file() + " under token " + a.token());
        }
        if (outcome instanceof Outcome.Refused r) {
            FencedMessage.lines(r.fenced(), r.reread()).forEach(ctx.err()::println);
            return ExitCode.FENCED.code();
        }
        if (outcome instanceof Outcome.Failed f) {
            ctx.err()
                    .println("fence: migration " + f.file() + " line " + f.line() + " failed: " + f.message()
                            + (f.rolledBack()
                                    ? " (rolled back: nothing of it was applied, the fence row is unchanged)"
                                    : ""));
            return ExitCode.REJECTED.code();
        }
        Outcome.Done d = (Outcome.Done) outcome;
        for (Migrator.Skipped s : d.skipped()) {
            ctx.out()
                    .println("already applied: " + s.file()
                            + (s.appliedToken() == null
                                    ? " (without a fence token)"
                                    : " (under token " + s.appliedToken()
                                            + (s.appliedHolder() == null
                                                    ? ""
                                                    : " by " + Printable.name(s.appliedHolder()))
                                            + ")"));
        }
        if (d.applied().isEmpty() && d.skipped().isEmpty()) {
            ctx.out().println("nothing to apply: no migrations in " + migrations.dir);
        }
        return ExitCode.OK.code();
    }
}
