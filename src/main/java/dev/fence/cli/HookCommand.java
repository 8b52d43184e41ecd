package dev.fence.cli;

import dev.fence.hookpath.HookRunner;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code fence hook}: the git server hooks. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "hook",
        mixinStandardHelpOptions = true,
        description = {
            "Git server hooks. Installed by 'fence install'; git runs them with the push on stdin.",
            "Configuration: --config FILE, else <GIT_DIR>/fence.conf, else /etc/fence/fence.conf (never the environment)."
        },
        subcommands = {HookCommand.PreReceive.class, HookCommand.PostReceive.class})
final class HookCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a hook name is required (pre-receive, post-receive)");
    }

    /** What a hook run in {@code ctx} reads and writes. */
    static HookRunner.Io io(Context ctx) {
        return new HookRunner.Io(ctx.in(), ctx.err(), ctx.env(), ctx.clock(), ctx.cwd());
    }

    @ExitCodes({
        ExitCode.OK,
        ExitCode.REJECTED,
        ExitCode.USAGE,
        ExitCode.STORE_UNAVAILABLE,
        ExitCode.CONFIG,
        ExitCode.INTERNAL
    })
    @Command(
            name = "pre-receive",
            mixinStandardHelpOptions = true,
            description = {
                "Judge a push: reads '<old> <new> <ref>' lines on stdin and GIT_PUSH_OPTION_*;",
                "refuses stale or superseded tokens with a FENCED message. Exit 0 accepts the push,",
                "1 rejects it (every ref: a push is all-or-nothing)."
            })
    static final class PreReceive implements Callable<Integer> {
        private final Context ctx;

        @Option(names = "--config", paramLabel = "FILE", description = "Configuration file.")
        Path config;

        @Option(names = "--store", paramLabel = "URL", description = "Store URL (overrides the configuration).")
        String store;

        @Option(
                names = "--server",
                paramLabel = "URL",
                description = "Ask the fence server at URL for the verdict (default: the configuration's 'server',"
                        + " unless --store is given). Credential: $FENCE_CREDENTIAL,"
                        + " $FENCE_CREDENTIAL_FILE or ~/.config/fence/credential.")
        String server;

        PreReceive(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            return HookRunner.preReceive(io(ctx), config, store, server);
        }
    }

    @ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.INTERNAL})
    @Command(
            name = "post-receive",
            mixinStandardHelpOptions = true,
            description = "Record the refs a push updated as landed in the ledger. Never fails the push.")
    static final class PostReceive implements Callable<Integer> {
        private final Context ctx;

        @Option(names = "--config", paramLabel = "FILE", description = "Configuration file.")
        Path config;

        @Option(names = "--store", paramLabel = "URL", description = "Store URL (overrides the configuration).")
        String store;

        @Option(names = "--server", paramLabel = "URL", description = "Record through the fence server at URL.")
        String server;

        PostReceive(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            return HookRunner.postReceive(io(ctx), config, store, server);
        }
    }
}
