package dev.fence.cli;

import dev.fence.core.Printable;
import dev.fence.json.Json;
import dev.fence.migrate.MigrationStatus;
import dev.fence.migrate.Migrator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence migrate status}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = {
            "Show every version of DIR and the database: applied (under which token, by whom) or pending,",
            "and the token in the resource's fence row. Changes nothing. This is the command to re-read",
            "the database with after a FENCED migration."
        })
final class MigrateStatusCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    MigrationOptions migrations;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    MigrateStatusCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        MigrationStatus s = Migrator.status(migrations.database(ctx), migrations.directory(ctx), migrations.resource);
        if (json) {
            Map<String, Object> m = Json.object();
            m.put("db", s.db());
            m.put("dir", s.dir());
            m.put("resource", s.resource());
            m.put("fenceToken", s.fenceToken());
            m.put("flyway", s.flyway());
            List<Map<String, Object>> entries = new ArrayList<>();
            for (MigrationStatus.Entry e : s.entries()) {
                Map<String, Object> o = Json.object();
                o.put("version", e.version());
                o.put("file", e.file());
                o.put("applied", e.applied());
                o.put("appliedToken", e.appliedToken());
                o.put("appliedHolder", e.appliedHolder());
                entries.add(o);
            }
            m.put("migrations", entries);
            ctx.out().println(Json.write(m));
            return ExitCode.OK.code();
        }
        ctx.out()
                .println(
                        "database " + s.db() + ", resource " + s.resource() + ": fence row at token " + s.fenceToken());
        if (s.flyway()) {
            ctx.out().println("  managed by Flyway (flyway_schema_history): fence migrate will not apply here");
        }
        for (MigrationStatus.Entry e : s.entries()) {
            String state = !e.applied()
                    ? "pending"
                    : e.appliedToken() == null
                            ? "applied without a fence token"
                            : "applied under token " + e.appliedToken()
                                    + (e.appliedHolder() == null ? "" : " by " + Printable.name(e.appliedHolder()));
            ctx.out().println("  " + e.version() + "  " + (e.file() == null ? "(no file)" : e.file()) + "  " + state);
        }
        if (s.entries().isEmpty()) {
            ctx.out().println("  no migrations in " + s.dir());
        }
        return ExitCode.OK.code();
    }
}
