package dev.fence.cli;

import dev.fence.core.ConfigException;
import dev.fence.core.LeaseStore;
import dev.fence.hook.HookConfig;
import dev.fence.hook.PostReceiveHook;
import dev.fence.hook.PreReceiveHook;
import dev.fence.server.client.RemoteHooks;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code fence hook}: the git server hooks. */
@Command(
        name = "hook",
        mixinStandardHelpOptions = true,
        description = {
            "Git server hooks. Installed by 'fence install'; git runs them with the push on stdin.",
            "Configuration: --config FILE, else FENCE_CONFIG, else <GIT_DIR>/fence.conf, else /etc/fence/fence.conf."
        },
        subcommands = {HookCommand.PreReceive.class, HookCommand.PostReceive.class})
final class HookCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a hook name is required (pre-receive, post-receive)");
    }

    /** Opens stores by URL for the hooks: the configured URL, else FENCE_STORE, else the default file. */
    static Function<String, LeaseStore> storeOpener(Context ctx, java.time.Duration timeout) {
        StoreOptions options = new StoreOptions(
                timeout,
                StoreOptions.defaults().retention(),
                0,
                StoreOptions.defaults().waitTimeout());
        return url -> Stores.open(Stores.resolveUrl(url, ctx.env()), options);
    }

    /** A hook in server mode: the client and the local configuration. */
    record Remote(RemoteHooks hooks, HookConfig config) {}

    /**
     * Server mode when {@code --server} is given, or when no {@code --store} is given and the
     * configuration (or {@code FENCE_SERVER}) names a server; else null (direct mode, which also reports
     * a broken configuration).
     */
    static Remote remote(Context ctx, Path configFile, String store, String server) {
        if (server == null && store != null) {
            return null;
        }
        HookConfig config;
        try {
            config = HookConfig.load(ctx.env(), gitDir(ctx), configFile);
        } catch (ConfigException e) {
            if (server == null) {
                return null;
            }
            config = new HookConfig(
                    dev.fence.core.FencePolicy.defaults(),
                    java.util.Optional.empty(),
                    java.util.Optional.of(server),
                    java.util.Optional.empty(),
                    java.util.Optional.empty());
        }
        String url = server != null ? server : config.server().orElse(null);
        if (url == null) {
            return null;
        }
        return new Remote(new RemoteHooks(ServerOption.client(ctx, url), ctx.clock()), config);
    }

    static Path gitDir(Context ctx) {
        String dir = ctx.env().get("GIT_DIR");
        return dir == null || dir.isBlank() ? ctx.cwd() : ctx.cwd().resolve(dir).normalize();
    }

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
                description = "Ask the fence server at URL for the verdict (default: the configuration's 'server'"
                        + " or $FENCE_SERVER, unless --store is given). Credential: $FENCE_CREDENTIAL,"
                        + " $FENCE_CREDENTIAL_FILE or ~/.config/fence/credential.")
        String server;

        PreReceive(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            PreReceiveHook.Result r;
            Remote remote = remote(ctx, config, store, server);
            if (remote != null) {
                r = remote.hooks().preReceive(ctx.env(), gitDir(ctx), ctx.in(), remote.config());
            } else {
                PreReceiveHook hook =
                        new PreReceiveHook(storeOpener(ctx, java.time.Duration.ofSeconds(2)), ctx.clock());
                r = hook.run(ctx.env(), gitDir(ctx), ctx.in(), config, store);
            }
            r.lines().forEach(ctx.err()::println);
            return r.exitCode();
        }
    }

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
            Remote remote;
            try {
                remote = remote(ctx, config, store, server);
            } catch (RuntimeException e) {
                ctx.err().println("warning: fence could not record the landed push: " + e.getMessage());
                return ExitCode.OK.code();
            }
            if (remote != null) {
                remote.hooks()
                        .postReceive(ctx.env(), gitDir(ctx), ctx.in(), remote.config())
                        .forEach(ctx.err()::println);
                return ExitCode.OK.code();
            }
            PostReceiveHook hook = new PostReceiveHook(storeOpener(ctx, java.time.Duration.ofSeconds(2)), ctx.clock());
            hook.run(ctx.env(), gitDir(ctx), ctx.in(), config, store).forEach(ctx.err()::println);
            return ExitCode.OK.code();
        }
    }
}
