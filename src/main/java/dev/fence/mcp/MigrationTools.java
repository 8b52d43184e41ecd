package dev.fence.mcp;

import dev.fence.core.FencedWrites;
import dev.fence.json.Json;
import dev.fence.migrate.DatabaseUrl;
import dev.fence.migrate.Migrator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code apply_migration}: {@code fence migrate apply} (and {@code reapply}) as a tool, through {@link
 * Migrator}, on the one database and migrations directory the server was started with, under the holder's
 * grant on the migrations' resource.
 */
public final class MigrationTools {
    private MigrationTools() {}

    /**
     * The tool.
     *
     * @param dirLabel the directory as the operator named it, for the re-read command
     * @param resource the fenced resource of the migrations
     */
    public static FenceTools.Extra of(DatabaseUrl db, Path dir, String dirLabel, String resource, FencedWrites writes) {
        return new FenceTools.Extra() {
            @Override
            public FenceTools.Tool tool() {
                Map<String, Object> p = new LinkedHashMap<>();
                p.put(
                        "version",
                        FenceTools.property("string", "The migration's version: its file's digits, e.g. 0042."));
                p.put(
                        "reapply",
                        FenceTools.property(
                                "boolean",
                                "Run an applied version's file again; allowed only for a version applied under"
                                        + " your own current token."));
                return new FenceTools.Tool(
                        "apply_migration",
                        "Apply one database migration under your lease on " + resource + " (lease_acquire it"
                                + " first). The database checks your token in the same transaction. If the result"
                                + " is FENCED (fenced=true) nothing was applied: your lease is gone or another token"
                                + " applied it. Do not renumber the migration or retry: re-read and re-plan.",
                        FenceTools.schema(p, List.of("version")));
            }

            @Override
            public ToolResult call(Map<String, Object> arguments, FenceTools.Grants grants) {
                try {
                    Arguments a = new Arguments("apply_migration", arguments, Set.of("version", "reapply"));
                    Object v = arguments.get("version");
                    String version = v instanceof Number n ? n.toString() : a.string("version", true);
                    if (!version.matches("[0-9]{1,18}")) {
                        throw new Arguments.Invalid(
                                "version", "argument version must be the migration file's digits, e.g. 0042");
                    }
                    boolean reapply = a.bool("reapply", false);
                    return grants.under(resource, "lease_status {\"resource\": \"" + resource + "\"}", (t, proof) -> {
                        Migrator.Outcome o = new Migrator(writes)
                                .run(new Migrator.Request(
                                        db, dir, version, reapply, resource, grants.holder(), t, proof, dirLabel));
                        List<String> lines = new ArrayList<>();
                        List<Map<String, Object>> applied = new ArrayList<>();
                        for (Migrator.Applied m : o.applied()) {
                            lines.add((m.reapplied() ? "Reapplied " : "Applied ") + m.file() + " under token "
                                    + m.token() + ".");
                            Map<String, Object> e = Json.object();
                            e.put("file", m.file());
                            e.put("version", m.version());
                            e.put("token", m.token());
                            e.put("reapplied", m.reapplied());
                            applied.add(e);
                        }
                        if (o instanceof Migrator.Outcome.Refused r) {
                            return ToolResult.fenced(r.fenced(), r.reread());
                        }
                        if (o instanceof Migrator.Outcome.Failed f) {
                            Map<String, Object> m = Json.object();
                            m.put("file", f.file());
                            m.put("line", f.line());
                            m.put("rolledBack", f.rolledBack());
                            return ToolResult.failure(
                                    "rejected",
                                    "migration " + f.file() + " line " + f.line() + " failed: " + f.message()
                                            + (f.rolledBack() ? " (rolled back: nothing of it was applied)" : ""),
                                    m);
                        }
                        Migrator.Outcome.Done d = (Migrator.Outcome.Done) o;
                        for (Migrator.Skipped s : d.skipped()) {
                            lines.add("Already applied: " + s.file()
                                    + (s.appliedToken() == null
                                            ? " (without a token)."
                                            : " (under token " + s.appliedToken() + ")."));
                        }
                        if (lines.isEmpty()) {
                            lines.add("No migration " + version + " in " + dirLabel + ".");
                        }
                        Map<String, Object> m = Json.object();
                        m.put("resource", resource);
                        m.put("applied", applied);
                        m.put(
                                "alreadyApplied",
                                d.skipped().stream().map(Migrator.Skipped::file).toList());
                        return ToolResult.ok(lines, m);
                    });
                } catch (RuntimeException e) {
                    return FenceTools.failure(e);
                }
            }
        };
    }
}
