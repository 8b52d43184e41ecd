package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.LeaseOperations;
import dev.fence.integrate.ClaudeCodeHooks;
import dev.fence.json.GrantFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence integrate claude-code hook pre-tool-use} (and {@code post-tool-use}): the heartbeat. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "pre-tool-use",
        aliases = "post-tool-use",
        mixinStandardHelpOptions = true,
        description = {
            "PreToolUse and PostToolUse: renew every lease the holder holds to --ttl, around each tool call, with"
                    + " the proof of its grant kept in --grants DIR (where 'fence mcp --grants DIR' keeps the"
                    + " grants it takes, and 'fence lease acquire --grant-file DIR/NAME.grant' puts one).",
            "",
            "Prints each renewal on stdout. A lease whose grant is not kept there is not renewed, and says so on"
                    + " stdout without blocking the call: in direct mode a holder's name and token are public, and"
                    + " only the grant's proof shows a renewal is the holder's (through 'fence serve', whose"
                    + " credential is the holder's, it is renewed anyway). Leases already lost are left alone (the"
                    + " SessionStart hook and every fenced tool report them). When a renewal finds a lease gone"
                    + " (taken between the read and the renewal), prints the FENCED message on stderr and exits 2,"
                    + " which Claude Code shows to the model (and, before a tool call, blocks that one call: it was"
                    + " planned under a lease that is gone). A store that cannot be reached exits 5, which does not"
                    + " block: the remote's hook still fences."
        })
final class ClaudeCodeToolUseHook implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    LeaseAccessOptions access;

    @Option(names = "--holder", required = true, paramLabel = "NAME", description = "The holder (agent name).")
    String holder;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "2m",
            description = "Renew to this (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(
            names = "--grants",
            paramLabel = "DIR",
            description = "Where the holder's grants are kept (written by 'fence integrate claude-code').")
    Path grants;

    ClaudeCodeToolUseHook(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws IOException {
        var duration = Durations.parsePositive("--ttl", ttl);
        ClaudeCodeHooks.parse(new String(ctx.in().readAllBytes(), StandardCharsets.UTF_8));
        Path dir = grants == null ? null : ctx.cwd().resolve(grants);
        GrantFiles.Kept kept = dir == null ? GrantFiles.Kept.none() : GrantFiles.readDir(dir);
        ClaudeCodeHooks.Heartbeat beat;
        try (LeaseOperations leases = access.open(ctx)) {
            beat = ClaudeCodeHooks.renewAll(leases, ctx.clock(), holder, duration, kept);
        }
        for (ClaudeCodeHooks.Renewed r : beat.renewed()) {
            ctx.out()
                    .println("fence: renewed " + r.resource() + " (token "
                            + r.lease().token() + ") until " + r.lease().expiresAt());
        }
        for (ClaudeCodeHooks.Unproven u : beat.unproven()) {
            ctx.out()
                    .println("fence: not renewing " + u.resource() + " (token " + u.token() + "): " + whyUnproven(dir));
        }
        for (String skipped : kept.unreadable()) {
            ctx.out().println("fence: skipped a kept grant: " + skipped);
        }
        for (Fenced f : beat.lost()) {
            FencedMessage.lines(f).forEach(ctx.err()::println);
        }
        // Exit 2 is Claude Code's "show stderr to the model" (and block a PreToolUse call).
        return beat.lost().isEmpty() ? ExitCode.OK.code() : ExitCode.USAGE.code();
    }

    private static String whyUnproven(Path dir) {
        String rule = "a lease is renewed here only with the proof its grant returned, since its holder's name and"
                + " token are public";
        if (dir == null) {
            return "this hook reads no kept grants (it has no --grants DIR; run 'fence integrate claude-code' again"
                    + " to add it), and " + rule;
        }
        return "its grant is not kept in " + dir + ", and " + rule + " (take leases with the lease_acquire tool, or"
                + " keep the grant there: fence lease acquire ... --grant-file " + dir + "/NAME.grant)";
    }
}
