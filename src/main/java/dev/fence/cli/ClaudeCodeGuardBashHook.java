package dev.fence.cli;

import dev.fence.integrate.ClaudeCodeHooks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence integrate claude-code hook guard-bash}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.INTERNAL})
@Command(
        name = "guard-bash",
        mixinStandardHelpOptions = true,
        description = {
            "PreToolUse on Bash: block a plain git push of a branch (branches are fenced; use push_branch or"
                    + " 'fence push') and any forced push without an explicit expected SHA"
                    + " (--force-with-lease=<ref>:<sha>).",
            "",
            "Exit 2 blocks the call, with the reason and what to use instead on stderr for the model; a malformed"
                    + " input also exits 2 (fails closed). A guardrail only: the remote's hook is the fence."
        })
final class ClaudeCodeGuardBashHook implements Callable<Integer> {
    private final Context ctx;

    @Option(names = "--holder", required = true, paramLabel = "NAME", description = "The holder (agent name).")
    String holder;

    @Option(names = "--repo", paramLabel = "ID", description = "Repository id, for the 'fence push' it suggests.")
    String repo;

    ClaudeCodeGuardBashHook(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws IOException {
        var input = ClaudeCodeHooks.parse(new String(ctx.in().readAllBytes(), StandardCharsets.UTF_8));
        Optional<String> why = ClaudeCodeHooks.guardBash(input.bashCommand(), holder, repo);
        if (why.isPresent()) {
            ctx.err().println(why.get());
            // Exit 2 is Claude Code's "block this tool call and show stderr to the model".
            return ExitCode.USAGE.code();
        }
        return ExitCode.OK.code();
    }
}
