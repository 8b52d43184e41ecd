package dev.fence.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code fence integrate claude-code hook}: what the hooks in {@code .claude/settings.json} run. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "hook",
        mixinStandardHelpOptions = true,
        description = {
            "The commands Claude Code's hooks run (written by 'fence integrate claude-code'). Each reads the"
                    + " event's JSON on stdin. Exit 0 lets the tool call go on; exit 2 blocks a PreToolUse call"
                    + " and shows stderr to the model (after a PostToolUse it shows stderr to the model); other"
                    + " codes are shown to the user and do not block."
        },
        subcommands = {ClaudeCodeSessionStartHook.class, ClaudeCodeToolUseHook.class, ClaudeCodeGuardBashHook.class})
final class ClaudeCodeHookCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(
                spec.commandLine(), "name the hook: session-start, pre-tool-use, post-tool-use" + " or guard-bash");
    }
}
