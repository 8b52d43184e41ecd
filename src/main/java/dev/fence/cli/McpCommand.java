package dev.fence.cli;

import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.LeaseOperations;
import dev.fence.mcp.FenceMcpServer;
import dev.fence.mcp.FenceTools;
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
            "Tools: lease_acquire, lease_renew, lease_release, lease_status, read_state {branch | resource}"
                    + " and, with --repo, push_branch {branch} (the lease-owned force-with-lease of 'fence push')."
                    + " A branch is named by branch (of --repo), any other resource by resource.",
            "",
            "The grants stay in this process: no tool takes or shows a proof or an expected SHA. Every tool call"
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
            description = "TTL of a grant whose lease_acquire names none, and of leases taken over from elsewhere"
                    + " (default: ${DEFAULT-VALUE}).")
    String ttl;

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
                ctx.clock());
        String version = Main.class.getPackage().getImplementationVersion();
        try (LeaseOperations leases = access.open(ctx)) {
            FenceMcpServer.serve(
                    new FenceTools(leases, settings),
                    ownershipRule(),
                    version == null ? "development" : version,
                    ctx.in(),
                    ctx.out());
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
