package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.LeaseOperations;
import dev.fence.integrate.ClaudeCodeHooks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
            "PreToolUse and PostToolUse: renew every lease the holder holds to --ttl, around each tool call.",
            "",
            "Prints each renewal on stdout. Leases already lost are left alone (the SessionStart hook and every"
                    + " fenced tool report them). When a renewal finds a lease gone (taken between the read and the"
                    + " renewal), prints the FENCED message on stderr and exits 2, which Claude Code shows to the model (and, before a tool call, blocks that"
                    + " one call: it was planned under a lease that is gone). A store that cannot be reached exits"
                    + " 5, which does not block: the remote's hook still fences."
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

    ClaudeCodeToolUseHook(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws IOException {
        var duration = Durations.parsePositive("--ttl", ttl);
        ClaudeCodeHooks.parse(new String(ctx.in().readAllBytes(), StandardCharsets.UTF_8));
        ClaudeCodeHooks.Heartbeat beat;
        try (LeaseOperations leases = access.open(ctx)) {
            beat = ClaudeCodeHooks.renewAll(leases, ctx.clock(), holder, duration);
        }
        for (ClaudeCodeHooks.Renewed r : beat.renewed()) {
            ctx.out()
                    .println("fence: renewed " + r.resource() + " (token "
                            + r.lease().token() + ") until " + r.lease().expiresAt());
        }
        for (Fenced f : beat.lost()) {
            FencedMessage.lines(f).forEach(ctx.err()::println);
        }
        // Exit 2 is Claude Code's "show stderr to the model" (and block a PreToolUse call).
        return beat.lost().isEmpty() ? ExitCode.OK.code() : ExitCode.USAGE.code();
    }
}
