package dev.fence.cli;

import dev.fence.core.ConfigException;
import dev.fence.core.FencePolicy;
import dev.fence.core.LeaseStore;
import dev.fence.hook.HookConfig;
import dev.fence.hook.PostReceiveHook;
import dev.fence.hook.PreReceiveHook;
import dev.fence.server.client.RemoteHooks;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

/**
 * Runs the server hooks, in direct mode (the store) or server mode ({@code fence serve}). Deliberately
 * free of picocli: {@link Main} calls it directly for {@code hook pre-receive}, so a push pays for
 * neither picocli's classes nor its command model (picocli's jar is old bytecode that class-data
 * sharing cannot archive).
 */
final class HookRunner {
    private HookRunner() {}

    /** Runs pre-receive; returns git's exit code (0 accept, 1 reject). */
    static int preReceive(Context ctx, Path config, String store, String server) {
        // The configuration is read once: it decides server or direct mode, and direct mode judges with it.
        HookConfig loaded = null;
        if (server != null || store == null) {
            try {
                loaded = HookConfig.load(gitDir(ctx), config);
            } catch (ConfigException e) {
                loaded = null;
            }
        }
        Remote remote = remote(ctx, loaded, store, server);
        PreReceiveHook hook = new PreReceiveHook(storeOpener(ctx), ctx.clock());
        PreReceiveHook.Result r = remote != null
                ? remote.hooks().preReceive(ctx.env(), gitDir(ctx), ctx.in(), remote.config())
                : loaded != null
                        ? hook.run(ctx.env(), gitDir(ctx), ctx.in(), loaded, store)
                        : hook.run(ctx.env(), gitDir(ctx), ctx.in(), config, store);
        for (String line : r.lines()) {
            ctx.err().println(line);
        }
        return r.exitCode();
    }

    /** Runs post-receive; always 0 (the refs have already moved). */
    static int postReceive(Context ctx, Path config, String store, String server) {
        Remote remote;
        try {
            remote = remote(ctx, config, store, server);
        } catch (RuntimeException e) {
            ctx.err().println("warning: fence could not record the landed push: " + e.getMessage());
            return ExitCode.OK.code();
        }
        var lines = remote != null
                ? remote.hooks().postReceive(ctx.env(), gitDir(ctx), ctx.in(), remote.config())
                : new PostReceiveHook(storeOpener(ctx), ctx.clock())
                        .run(ctx.env(), gitDir(ctx), ctx.in(), config, store);
        for (String line : lines) {
            ctx.err().println(line);
        }
        return ExitCode.OK.code();
    }

    /**
     * Handles {@code hook pre-receive [--config FILE] [--store URL] [--server URL]} without picocli, or
     * returns null when the arguments are anything else (help, unknown options), which then go through the
     * full parser.
     */
    static Integer fastPath(Context ctx, String[] args) {
        if (args.length < 2 || !args[0].equals("hook") || !args[1].equals("pre-receive")) {
            return null;
        }
        Path config = null;
        String store = null;
        String server = null;
        for (int i = 2; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                return null;
            }
            switch (args[i]) {
                case "--config" -> config = ctx.cwd().resolve(args[i + 1]);
                case "--store" -> store = args[i + 1];
                case "--server" -> server = args[i + 1];
                default -> {
                    return null;
                }
            }
        }
        try {
            return preReceive(ctx, config, store, server);
        } catch (RuntimeException e) {
            // Anything unforeseen rejects the push (fail closed) with a line the pusher can report.
            ctx.err().println("fence: " + Failures.messageOf(e));
            return ExitCode.REJECTED.code();
        }
    }

    /** A hook in server mode: the client and the local configuration. */
    record Remote(RemoteHooks hooks, HookConfig config) {}

    /**
     * Server mode when {@code --server} is given, or when no {@code --store} is given and the
     * configuration names a server (never {@code FENCE_SERVER}: a hook's environment may be the pusher's); else null (direct mode, which also reports
     * a broken configuration).
     */
    static Remote remote(Context ctx, Path configFile, String store, String server) {
        if (server == null && store != null) {
            return null;
        }
        HookConfig config;
        try {
            config = HookConfig.load(gitDir(ctx), configFile);
        } catch (ConfigException e) {
            config = null;
        }
        return remote(ctx, config, store, server);
    }

    /** As {@link #remote(Context, Path, String, String)} with the configuration read (null: broken). */
    static Remote remote(Context ctx, HookConfig loaded, String store, String server) {
        if (server == null && store != null) {
            return null;
        }
        HookConfig config = loaded;
        if (config == null) {
            if (server == null) {
                return null;
            }
            config = new HookConfig(
                    FencePolicy.defaults(), Optional.empty(), Optional.of(server), Optional.empty(), Optional.empty());
        }
        String url = server != null ? server : config.server().orElse(null);
        if (url == null) {
            return null;
        }
        return new Remote(new RemoteHooks(ServerOption.client(ctx, url), ctx.clock()), config);
    }

    private static Function<String, LeaseStore> storeOpener(Context ctx) {
        StoreOptions defaults = StoreOptions.defaults();
        // A hook makes two or three store calls and exits: one plain connection, no pool.
        StoreOptions options =
                new StoreOptions(Duration.ofSeconds(2), defaults.retention(), 0, defaults.waitTimeout(), true);
        // A class, not a lambda: the hook's store thread starts right after this, and the first lambda of a
        // JVM 17 process links the method-handle machinery (milliseconds), which is better paid while the
        // store thread is already connecting than before it starts.
        return new Function<>() {
            @Override
            public LeaseStore apply(String url) {
                // The hook's store comes from its configuration or command line only, never FENCE_STORE
                // or a default under HOME: on a local-path remote the environment is the pusher's.
                if (url == null || url.isBlank()) {
                    throw new ConfigException("no store configured: set 'store' in the hook's fence.conf"
                            + " or pass --store to the installed hook");
                }
                return Stores.open(url.trim(), options);
            }
        };
    }

    static Path gitDir(Context ctx) {
        String dir = ctx.env().get("GIT_DIR");
        return dir == null || dir.isBlank() ? ctx.cwd() : ctx.cwd().resolve(dir).normalize();
    }
}
