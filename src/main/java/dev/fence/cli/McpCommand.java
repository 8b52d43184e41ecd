package dev.fence.cli;

import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.FencedWrites;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.mcp.FenceMcpServer;
import dev.fence.mcp.FenceTools;
import dev.fence.mcp.FileTools;
import dev.fence.mcp.MigrationTools;
import dev.fence.migrate.DatabaseUrl;
import dev.fence.migrate.Migrator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence mcp}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "mcp",
        mixinStandardHelpOptions = true,
        description = {
            "Serve fence's tools to an agent as a Model Context Protocol server on stdin/stdout.",
            "",
            "Tools: lease_acquire, lease_renew, lease_release, lease_status, read_state {branch | resource};"
                    + " with --repo, push_branch {branch} (the lease-owned force-with-lease of 'fence push');"
                    + " read_file {path} and, with --store, write_file {path, content, expected_sha256, resource?}"
                    + " ('fence read'/'fence write' under --root); with --db and --migrations, apply_migration"
                    + " {version, reapply?} ('fence migrate apply/reapply')."
                    + " A branch is named by branch (of --repo), any other resource by resource.",
            "",
            "The grants stay in this process, and with --grants DIR also in DIR (one file per resource, proof"
                    + " included, mode 0600, as 'fence lease acquire --grant-file' writes it; deleted on release or"
                    + " loss), where the Claude Code heartbeat hooks renew with them and a restarted server takes"
                    + " them up again. No tool takes or shows a proof or an expected SHA. Every tool call"
                    + " on a resource the server holds renews its lease before and after it runs; nothing renews"
                    + " on a timer. FENCED comes back as its own tool error: isError true, the FENCED message as"
                    + " the text, and structured content {fenced: true, reason, resource, token, current,"
                    + " reread}; busy, store-down and bad input are {fenced: false, error: busy | store-down |"
                    + " invalid, ...}.",
            "",
            "Also served: the prompt fence-ownership-rule (the rule for the system prompt) and the resource"
                    + " fence://leases (the holder's live leases). Nothing but MCP messages is written to stdout;"
                    + " the server stops when its input ends.",
            "",
            "Example (.mcp.json or any MCP client's server command):",
            "  fence mcp --holder agent-a --store sqlite:/srv/fence/fence.db --repo app --clone ~/agent-a"
        })
final class McpCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    LeaseAccessOptions access;

    @Option(names = "--holder", required = true, paramLabel = "NAME", description = "The lease holder (agent name).")
    String holder;

    @Option(
            names = "--repo",
            paramLabel = "ID",
            description = "Repository id of the branches (as the git host's hook sees it); without it, only"
                    + " resource names work and there is no push_branch.")
    String repo;

    @Option(names = "--clone", paramLabel = "DIR", description = "The agent's clone (default: the working directory).")
    Path clone;

    @Option(
            names = "--remote",
            paramLabel = "NAME|URL",
            defaultValue = "origin",
            description = "Remote of the clone (default: ${DEFAULT-VALUE}).")
    String remote;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "2m",
            description = "TTL of a grant whose lease_acquire names none, and of a lease taken over from elsewhere"
                    + " through --server (one taken up from a grant kept in --grants keeps that grant's TTL)"
                    + " (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(
            names = "--grants",
            paramLabel = "DIR",
            description = "Also keep the grants in DIR (mode 0600), and take up a grant kept there for a resource"
                    + " the holder holds from elsewhere.")
    Path grants;

    @Option(
            names = "--root",
            paramLabel = "DIR",
            description = "Where read_file and write_file may read and write (default: the clone). write_file needs"
                    + " direct mode (--store): the file's lock and the token check are the store's.")
    Path root;

    @Option(
            names = "--files-resource",
            paramLabel = "NAME",
            description = "The resource a write_file goes under when the call names none.")
    String filesResource;

    @Option(
            names = "--db",
            paramLabel = "URL",
            description = "The database apply_migration migrates (with --migrations; direct mode), as for 'fence"
                    + " migrate --db'.")
    String db;

    @Option(names = "--migrations", paramLabel = "DIR", description = "The migrations directory (with --db).")
    String migrations;

    @Option(
            names = "--migrations-resource",
            paramLabel = "NAME",
            defaultValue = Migrator.DEFAULT_RESOURCE,
            description = "The fenced resource of the migrations (default: ${DEFAULT-VALUE}).")
    String migrationsResource;

    McpCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws InterruptedException {
        var settings = new FenceTools.Settings(
                holder,
                repo,
                clone == null ? ctx.cwd() : ctx.cwd().resolve(clone).normalize(),
                remote,
                Durations.parsePositive("--ttl", ttl),
                ctx.env(),
                ctx.clock(),
                grants == null ? null : ctx.cwd().resolve(grants).normalize());
        if ((db == null) != (migrations == null)) {
            throw new InvalidInputException("--db and --migrations go together");
        }
        String url = access.server.resolve(ctx, access.store);
        if (url != null && db != null) {
            throw new InvalidInputException("apply_migration needs direct mode (--store): fence migrate claims the"
                    + " token against the store itself");
        }
        String version = Main.class.getPackage().getImplementationVersion();
        LeaseStore store = url == null ? access.store.open(ctx) : null;
        try (LeaseOperations leases =
                store != null ? new LeaseService(store, ctx.clock()) : LeaseAccessOptions.open(ctx, url, null)) {
            FencedWrites writes = store == null ? null : new FencedWrites(store, ctx.clock());
            FenceTools tools = new FenceTools(leases, settings);
            FileTools.of(
                            root == null
                                    ? settings.cloneDir()
                                    : ctx.cwd().resolve(root).normalize(),
                            filesResource,
                            writes)
                    .forEach(tools::with);
            if (db != null) {
                tools.with(MigrationTools.of(
                        DatabaseUrl.parse(db, ctx.cwd()),
                        ctx.cwd().resolve(migrations).normalize(),
                        migrations,
                        migrationsResource,
                        writes));
            }
            FenceMcpServer.serve(
                    tools, ownershipRule(), version == null ? "development" : version, ctx.in(), ctx.out(), ctx.err());
        }
        return ExitCode.OK.code();
    }

    /** The rule the README gives for the system prompt, shipped in the jar. */
    static String ownershipRule() {
        try (InputStream in = FenceMcpServer.class.getResourceAsStream("ownership-rule.txt")) {
            if (in == null) {
                throw new ConfigException("the jar lacks dev/fence/mcp/ownership-rule.txt");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new ConfigException("cannot read the ownership rule from the jar: " + e.getMessage(), e);
        }
    }
}
