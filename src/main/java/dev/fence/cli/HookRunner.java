package dev.fence.cli;

import dev.fence.core.LeaseStore;
import dev.fence.hook.PostReceiveHook;
import dev.fence.hook.PreReceiveHook;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Function;

/**
 * Runs the server hooks. Deliberately free of picocli: {@link Main} calls it directly for {@code hook
 * pre-receive}, so a push pays for neither picocli's classes nor its command model (picocli's jar is
 * old bytecode that class-data sharing cannot archive).
 */
final class HookRunner {
    private HookRunner() {}

    /** Runs pre-receive; returns git's exit code (0 accept, 1 reject). */
    static int preReceive(Context ctx, Path config, String store) {
        PreReceiveHook hook = new PreReceiveHook(storeOpener(ctx), ctx.clock());
        PreReceiveHook.Result r = hook.run(ctx.env(), gitDir(ctx), ctx.in(), config, store);
        r.lines().forEach(ctx.err()::println);
        return r.exitCode();
    }

    /** Runs post-receive; always 0. */
    static int postReceive(Context ctx, Path config, String store) {
        PostReceiveHook hook = new PostReceiveHook(storeOpener(ctx), ctx.clock());
        hook.run(ctx.env(), gitDir(ctx), ctx.in(), config, store).forEach(ctx.err()::println);
        return ExitCode.OK.code();
    }

    /**
     * Handles {@code hook pre-receive [--config FILE] [--store URL]} without picocli, or returns null when
     * the arguments are anything else (help, unknown options), which then go through the full parser.
     */
    static Integer fastPath(Context ctx, String[] args) {
        if (args.length < 2 || !args[0].equals("hook") || !args[1].equals("pre-receive")) {
            return null;
        }
        Path config = null;
        String store = null;
        for (int i = 2; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                return null;
            }
            switch (args[i]) {
                case "--config" -> config = ctx.cwd().resolve(args[i + 1]);
                case "--store" -> store = args[i + 1];
                default -> {
                    return null;
                }
            }
        }
        try {
            return preReceive(ctx, config, store);
        } catch (RuntimeException e) {
            // Anything unforeseen rejects the push (fail closed) with a line the pusher can report.
            ctx.err().println("fence: " + Failures.messageOf(e));
            return ExitCode.REJECTED.code();
        }
    }

    private static Function<String, LeaseStore> storeOpener(Context ctx) {
        StoreOptions defaults = StoreOptions.defaults();
        StoreOptions options = new StoreOptions(Duration.ofSeconds(2), defaults.retention(), 0, defaults.waitTimeout());
        return url -> Stores.open(Stores.resolveUrl(url, ctx.env()), options);
    }

    private static Path gitDir(Context ctx) {
        String dir = ctx.env().get("GIT_DIR");
        return dir == null || dir.isBlank() ? ctx.cwd() : ctx.cwd().resolve(dir).normalize();
    }
}
