package dev.fence.hookpath;

import dev.fence.core.ConfigException;
import dev.fence.core.FenceException;
import dev.fence.core.FencePolicy;
import dev.fence.core.InternalException;
import dev.fence.hook.HookConfig;
import dev.fence.hook.PostReceiveHook;
import dev.fence.hook.PreReceiveHook;
import dev.fence.server.client.FenceClient;
import dev.fence.server.client.RemoteHooks;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Runs the server hooks, in direct mode (the store) or server mode ({@code fence serve}), for {@code fence
 * hook pre-receive|post-receive} and for the process entry's fast path ({@link #fastPath}). Free of
 * picocli: the fast path's seam is that a push pays for neither picocli's classes nor its command model
 * (picocli's jar is old bytecode that class-data sharing cannot archive; design §7). Bench: every "Java
 * hook" row.
 *
 * <p>Exit codes are git's: 0 accepts the push, any other refuses all of it.
 */
public final class HookRunner {
    private static final int ACCEPT = 0;
    private static final int REJECT = 1;

    /** How long a hook in server mode waits for one answer from the server (as every fence client). */
    private static final Duration SERVER_TIMEOUT = Duration.ofSeconds(5);

    private HookRunner() {}

    /**
     * What a hook gets from its process.
     *
     * @param in the ref update lines
     * @param err where the lines for the pusher go
     * @param env the environment
     * @param clock the clock
     * @param cwd the working directory (the repository, unless {@code GIT_DIR} says otherwise)
     */
    public record Io(InputStream in, PrintWriter err, Map<String, String> env, Clock clock, Path cwd) {}

    /** Runs pre-receive; returns git's exit code (0 accept, 1 reject). */
    public static int preReceive(Io ctx, Path config, String store, String server) {
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
        PreReceiveHook hook = new PreReceiveHook(OneShotStores.INSTANCE, ctx.clock(), null, PlainDigests.INSTANCE);
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
    public static int postReceive(Io ctx, Path config, String store, String server) {
        Remote remote;
        try {
            remote = remote(ctx, config, store, server);
        } catch (RuntimeException e) {
            ctx.err().println("warning: fence could not record the landed push: " + e.getMessage());
            return ACCEPT;
        }
        var lines = remote != null
                ? remote.hooks().postReceive(ctx.env(), gitDir(ctx), ctx.in(), remote.config())
                : new PostReceiveHook(OneShotStores.INSTANCE, ctx.clock(), PlainDigests.INSTANCE)
                        .run(ctx.env(), gitDir(ctx), ctx.in(), config, store);
        for (String line : lines) {
            ctx.err().println(line);
        }
        return ACCEPT;
    }

    /**
     * Handles {@code hook pre-receive|post-receive [--config FILE] [--store URL] [--server URL]} without
     * picocli, or returns null when the arguments are anything else (help, unknown options), which then go
     * through the full parser. Both run on every push (post-receive where fence records landings, the
     * default of a bare install), so both start as fast as a JVM can.
     */
    public static Integer fastPath(Io ctx, String[] args) {
        if (args.length < 2 || !args[0].equals("hook")) {
            return null;
        }
        boolean pre = args[1].equals("pre-receive");
        if (!pre && !args[1].equals("post-receive")) {
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
        if (!pre) {
            try {
                return postReceive(ctx, config, store, server);
            } catch (RuntimeException e) {
                // The refs have moved already: what went wrong is reported, and the push stands.
                ctx.err().println("warning: fence could not record the landed push: " + messageOf(e));
                return ACCEPT;
            }
        }
        try {
            return preReceive(ctx, config, store, server);
        } catch (RuntimeException e) {
            // Anything unforeseen rejects the push (fail closed) with a line the pusher can report.
            ctx.err().println("fence: " + messageOf(e));
            return REJECT;
        }
    }

    /** A hook in server mode: the client and the local configuration. */
    private record Remote(RemoteHooks hooks, HookConfig config) {}

    /**
     * Server mode when {@code --server} is given, or when no {@code --store} is given and the
     * configuration names a server (never {@code FENCE_SERVER}: a hook's environment may be the pusher's); else null (direct mode, which also reports
     * a broken configuration).
     */
    private static Remote remote(Io ctx, Path configFile, String store, String server) {
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

    /** As {@link #remote(Io, Path, String, String)} with the configuration read (null: broken). */
    private static Remote remote(Io ctx, HookConfig loaded, String store, String server) {
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
        return new Remote(new RemoteHooks(FenceClient.create(url, ctx.env(), SERVER_TIMEOUT), ctx.clock()), config);
    }

    /** What the pusher is told of an unforeseen failure (as the CLI words it). */
    private static String messageOf(RuntimeException e) {
        return e instanceof FenceException && !(e instanceof InternalException)
                ? e.getMessage()
                : "internal error: " + e + " (rerun with --verbose for the stack trace and report it)";
    }

    private static Path gitDir(Io ctx) {
        String dir = ctx.env().get("GIT_DIR");
        return dir == null || dir.isBlank() ? ctx.cwd() : ctx.cwd().resolve(dir).normalize();
    }
}
