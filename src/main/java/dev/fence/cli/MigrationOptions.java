package dev.fence.cli;

import dev.fence.migrate.DatabaseUrl;
import dev.fence.migrate.Migrator;
import picocli.CommandLine.Option;

/** {@code --db URL --dir DIR [--resource R]}: the database, the migrations and the fenced resource. */
final class MigrationOptions {
    @Option(
            names = "--db",
            required = true,
            paramLabel = "URL",
            description = "The database: postgresql://user[:pass]@host:port/db | sqlite:PATH"
                    + " | mariadb://user[:pass]@host:port/db | mysql://user[:pass]@host:port/db.")
    String db;

    @Option(
            names = "--dir",
            required = true,
            paramLabel = "DIR",
            description = "The migrations directory: plain SQL files NNNN_name.sql.")
    String dir;

    @Option(
            names = "--resource",
            paramLabel = "NAME",
            defaultValue = Migrator.DEFAULT_RESOURCE,
            description = "The fenced resource (default: ${DEFAULT-VALUE}).")
    String resource;

    DatabaseUrl database(Context ctx) {
        return DatabaseUrl.parse(db, ctx.cwd());
    }

    java.nio.file.Path directory(Context ctx) {
        return ctx.cwd().resolve(dir).normalize();
    }
}
