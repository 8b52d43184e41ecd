package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.integrate.ClaudeCodeFiles;
import dev.fence.integrate.UrlPasswords;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence integrate claude-code}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "claude-code",
        mixinStandardHelpOptions = true,
        description = {
            "Write fence's hooks and MCP server into a Claude Code project (.claude/settings.json, .mcp.json).",
            "",
            "Merges into the files that are there: every other key, hook and server stays as it was. Adds:"
                    + " a SessionStart hook for compact and resume that prints the holder's live lease state (what"
                    + " 'fence status --holder H --prompt' prints) into the context, so a summary's 'I hold the"
                    + " lease' does not survive a compaction; PreToolUse and PostToolUse hooks that renew the"
                    + " holder's leases around every tool call (the heartbeat is the agent's progress) with the"
                    + " grants the server keeps in --grants DIR; a"
                    + " PreToolUse hook on Bash that blocks a plain git push of a branch and any forced push"
                    + " without an explicit expected SHA (exit 2, the reason on stderr for the model); and the"
                    + " 'fence mcp' server.",
            "",
            "Running it again changes nothing; --remove takes out exactly fence's entries (a file left empty is"
                    + " deleted); --dry-run prints what would be written. The hooks are one-line 'fence integrate"
                    + " claude-code hook ...' commands, so 'fence' must be on the PATH Claude Code runs them with"
                    + " (or give --fence). --store and --server are written into both files: leave them out to"
                    + " let FENCE_STORE or FENCE_SERVER decide. A URL that carries a password (user:password@,"
                    + " or a password= parameter) is refused (exit 2), since a project commits these files and"
                    + " the agent reads them: set FENCE_STORE in the agent's environment instead, keep a"
                    + " PostgreSQL password in ~/.pgpass, or give --server with the agent's credential in"
                    + " FENCE_CREDENTIAL_FILE.",
            "",
            "The server keeps each grant it takes, proof included, in --grants DIR (mode 0600; default"
                    + " ~/.fence/grants/HOLDER, written out as an absolute path), and the heartbeat renews a lease"
                    + " only with a grant kept there: a holder's name and token are public, so in direct mode the"
                    + " proof is what shows that a renewal is the holder's. A proof is a credential: keep DIR out"
                    + " of the project and out of anything committed.",
            "",
            "Example: fence integrate claude-code --project . --holder agent-a --server https://fence.internal:8700"
                    + " --repo app"
        },
        subcommands = {ClaudeCodeHookCommand.class})
final class IntegrateClaudeCodeCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(names = "--project", paramLabel = "DIR", description = "The project (default: the working directory).")
    Path project;

    @Option(names = "--dry-run", description = "Print the files as they would be written; change nothing.")
    boolean dryRun;

    @Option(names = "--remove", description = "Take fence's hooks and server out again.")
    boolean remove;

    @Option(names = "--holder", paramLabel = "NAME", description = "The lease holder the agent acts as.")
    String holder;

    @Option(
            names = "--store",
            paramLabel = "URL",
            description = "The store the hooks and server use; never one with a password in it.")
    String store;

    @Option(names = "--server", paramLabel = "URL", description = "The fence server the hooks and server use.")
    String server;

    @Option(names = "--repo", paramLabel = "ID", description = "Repository id of the branches (for push_branch).")
    String repo;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "2m",
            description = "What the tool-call hooks renew leases to (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(
            names = "--grants",
            paramLabel = "DIR",
            description = "Where the server keeps the holder's grants and the hooks read them (default:"
                    + " ~/.fence/grants/HOLDER).")
    Path grants;

    @Option(
            names = "--fence",
            paramLabel = "COMMAND",
            defaultValue = "fence",
            description = "How the hooks and the server run fence (default: ${DEFAULT-VALUE}).")
    String fence;

    IntegrateClaudeCodeCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        if (store != null && server != null) {
            throw new InvalidInputException("give either --store or --server, not both");
        }
        if (!remove && holder == null) {
            throw new InvalidInputException("name the holder the agent acts as: --holder NAME");
        }
        Durations.parsePositive("--ttl", ttl);
        if (!remove) {
            refusePassword("--store", store);
            refusePassword("--server", server);
        }
        List<String> access = new ArrayList<>();
        if (store != null) {
            access.addAll(List.of("--store", store));
        } else if (server != null) {
            access.addAll(List.of("--server", server));
        }
        Path dir = project == null ? ctx.cwd() : ctx.cwd().resolve(project).normalize();
        String name = holder == null ? "-" : Names.require("holder", holder);
        var options = new ClaudeCodeFiles.Options(fence, access, name, repo, ttl, remove ? null : grantsDir(name));
        List<ClaudeCodeFiles.Change> changes = ClaudeCodeFiles.plan(dir, options, remove);
        if (dryRun) {
            for (ClaudeCodeFiles.Change c : changes) {
                if (!c.changes()) {
                    ctx.out().println("unchanged " + c.file());
                } else if (c.after() == null) {
                    ctx.out().println("would remove " + c.file());
                } else {
                    ctx.out().println("would write " + c.file() + ":");
                    ctx.out().print(c.after());
                }
            }
            return ExitCode.OK.code();
        }
        ClaudeCodeFiles.apply(changes);
        for (ClaudeCodeFiles.Change c : changes) {
            ctx.out().println((!c.changes() ? "unchanged " : c.after() == null ? "removed " : "wrote ") + c.file());
        }
        return ExitCode.OK.code();
    }

    /**
     * Refuses a URL with a password in it, before anything is written or printed: both files are the
     * project's, which {@code git add -A} stages and the agent can read. The message never repeats it.
     */
    private static void refusePassword(String option, String url) {
        String where = UrlPasswords.where(url);
        if (where == null) {
            return;
        }
        throw new InvalidInputException(option + " carries a password (in " + where + "), and it would be"
                + " written into .mcp.json and .claude/settings.json, files a project commits and the agent"
                + " can read. Leave " + option + " out and set FENCE_STORE (or FENCE_SERVER) in the agent's"
                + " environment instead; for PostgreSQL keep the password in ~/.pgpass and give"
                + " postgresql://user@host/database; or give --server URL with the agent's credential in"
                + " FENCE_CREDENTIAL_FILE.");
    }

    /**
     * {@code --grants}, or {@code ~/.fence/grants/HOLDER}, as an absolute path: the hooks run wherever
     * Claude Code starts them, and the server entry's arguments see no shell to expand {@code ~}.
     */
    private String grantsDir(String holder) {
        if (grants != null) {
            return ctx.cwd().resolve(grants).toAbsolutePath().normalize().toString();
        }
        String home = ctx.env().get("HOME");
        if (home == null || home.isBlank()) {
            throw new InvalidInputException("HOME is not set, so there is no default for where the holder's grants"
                    + " are kept: give --grants DIR");
        }
        // The holder names one directory: no separator or dot-name of it may lead elsewhere.
        String dir = holder.replaceAll("[^A-Za-z0-9._@-]", "_");
        if (dir.matches("\\.+")) {
            dir = dir.replace('.', '_');
        }
        return Path.of(home, ".fence", "grants", dir)
                .toAbsolutePath()
                .normalize()
                .toString();
    }
}
