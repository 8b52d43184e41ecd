package dev.fence.cli;

import dev.fence.core.LeaseOperations;
import dev.fence.integrate.ClaudeCodeHooks;
import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence integrate claude-code hook session-start}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "session-start",
        mixinStandardHelpOptions = true,
        description = {
            "SessionStart (compact, resume): print the holder's live lease state, as 'fence status --holder H"
                    + " --prompt' words it, for Claude Code to add to the context as a fresh observation."
        })
final class ClaudeCodeSessionStartHook implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    LeaseAccessOptions access;

    @Option(names = "--holder", required = true, paramLabel = "NAME", description = "The holder (agent name).")
    String holder;

    ClaudeCodeSessionStartHook(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws IOException {
        ClaudeCodeHooks.parse(new String(ctx.in().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        try (LeaseOperations leases = access.open(ctx)) {
            ClaudeCodeHooks.sessionStart(leases, ctx.clock(), holder).forEach(ctx.out()::println);
        }
        return ExitCode.OK.code();
    }
}
