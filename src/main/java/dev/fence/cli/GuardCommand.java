package dev.fence.cli;

import dev.fence.client.GitRemotes;
import dev.fence.client.GuardInstaller;
import dev.fence.client.PrePushGuard;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.server.client.FenceClient;
import dev.fence.server.client.RemoteLeases;
import dev.fence.store.Stores;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code fence guard}: the client-side pre-push guard. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE})
@Command(
        name = "guard",
        mixinStandardHelpOptions = true,
        description = {
            "A pre-push guardrail for an agent's clone ('fence guard install').",
            "",
            "A pre-push hook in an agent's clone that stops a plain 'git push' (--force included) to a branch"
                    + " whose lease the clone's holder does not hold, or whose remote tip moved since the lease"
                    + " recorded it. It prints the FENCED message and git aborts the push before sending anything.",
            "",
            "A guardrail, not the fence: 'git push --no-verify' skips every pre-push hook. The fence is the"
                    + " remote's pre-receive hook ('fence install') and the expected old id 'fence push' sends."
                    + " A plain 'git push' that passes the guard does not move the lease's recorded SHA: push"
                    + " with 'fence push'."
        },
        subcommands = {GuardCommand.Install.class, GuardCommand.PrePush.class})
final class GuardCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a guard subcommand is required (install)");
    }

    @ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
    @Command(
            name = "install",
            mixinStandardHelpOptions = true,
            description = {
                "Write <clone>/.git/hooks/pre-push (marked '" + GuardInstaller.MARKER + "') that runs"
                        + " '<launcher> guard pre-push', and store --holder, --repo and --store or --server in the"
                        + " clone's git config (fence.holder, fence.repoId, fence.store or fence.server). The"
                        + " launcher is --launcher, else $FENCE_LAUNCHER (set by bin/fence), else 'fence' from PATH.",
                "With --server (or neither option and $FENCE_SERVER when the hook runs) the guard reads leases"
                        + " through fence serve, with the credential from $FENCE_CREDENTIAL or"
                        + " $FENCE_CREDENTIAL_FILE in git push's environment; it is never written to the clone.",
                "Refuses (exit 6, nothing changed) to replace a pre-push hook fence did not write, unless --force.",
                "",
                "Examples:",
                "  fence guard install --clone ~/work/app --holder agent-a --repo app --store redis://fence:6379",
                "  fence guard install --clone ~/work/app --holder agent-a --repo app --server https://fence.internal:8700"
            })
    static final class Install implements Callable<Integer> {
        private final Context ctx;

        @Option(names = "--clone", paramLabel = "PATH", description = "The clone (default: the current directory).")
        Path clone;

        @Option(names = "--holder", paramLabel = "NAME", description = "The agent this clone pushes for.")
        String holder;

        @Option(
                names = "--repo",
                paramLabel = "ID",
                description = "The repo id the remote's hook uses (plain git: the id 'fence install' set).")
        String repo;

        @Option(
                names = "--store",
                paramLabel = "URL",
                description = "The store the guard reads leases from (default: $FENCE_SERVER, else $FENCE_STORE"
                        + " when the hook runs).")
        String store;

        @Option(
                names = "--server",
                paramLabel = "URL",
                description = "Read leases through the fence server at URL instead of a store (the credential"
                        + " comes from $FENCE_CREDENTIAL or $FENCE_CREDENTIAL_FILE when the hook runs).")
        String server;

        @Option(names = "--launcher", paramLabel = "PATH", description = "The fence launcher the hook runs.")
        String launcher;

        @Option(names = "--force", description = "Replace a pre-push hook fence did not write (kept as a backup).")
        boolean force;

        Install(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            Path dir = clone == null ? ctx.cwd() : ctx.cwd().resolve(clone).normalize();
            String run = launcher;
            if (run == null) {
                String fromEnv = ctx.env().get("FENCE_LAUNCHER");
                run = fromEnv != null && fromEnv.startsWith("/") ? fromEnv : "fence";
            }
            var result = new GuardInstaller(new GitRemotes(ctx.env()))
                    .install(new GuardInstaller.Request(dir, holder, repo, store, server, run, force));
            if (result instanceof GuardInstaller.Result.Refused r) {
                ctx.err().println("fence guard install: refused: " + r.message());
                return ExitCode.CONFIG.code();
            }
            var installed = (GuardInstaller.Result.Installed) result;
            installed.done().forEach(ctx.out()::println);
            installed.warnings().forEach(w -> ctx.err().println("warning: " + w));
            return ExitCode.OK.code();
        }
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
            name = "pre-push",
            hidden = true,
            mixinStandardHelpOptions = true,
            description = {
                "Run by the installed pre-push hook: reads git's '<local ref> <local sha> <remote ref> <remote sha>'"
                        + " lines and refuses (exit 1, FENCED on stderr) unless the holder holds each branch's"
                        + " lease and the remote's tip is the SHA the lease recorded."
            })
    static final class PrePush implements Callable<Integer> {
        private final Context ctx;

        @Parameters(index = "0", paramLabel = "REMOTE", description = "The remote's name (or URL).")
        String remoteName;

        @Parameters(index = "1", paramLabel = "URL", description = "The URL pushed to.")
        String url;

        PrePush(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            PrePushGuard guard = new PrePushGuard(new GitRemotes(ctx.env()), this::open);
            PrePushGuard.Result r = guard.run(ctx.cwd(), remoteName, url, ctx.in());
            r.lines().forEach(ctx.err()::println);
            return r.exitCode();
        }

        /**
         * The clone's fence.server, else its fence.store, else $FENCE_SERVER, else $FENCE_STORE or the
         * default store: the order {@code --server}, {@code --store} and the environment have elsewhere.
         */
        private LeaseOperations open(String storeUrl, String serverUrl) {
            String server = serverUrl;
            if (server == null && storeUrl == null) {
                String env = ctx.env().get(FenceClient.SERVER_ENV);
                server = env == null || env.isBlank() ? null : env.strip();
            }
            if (server != null) {
                if (storeUrl != null) {
                    throw new InvalidInputException("the clone's git config sets both fence.store and fence.server;"
                            + " rerun 'fence guard install' with one of --store or --server");
                }
                return new RemoteLeases(ServerOption.client(ctx, server));
            }
            return new LeaseService(
                    Stores.open(Stores.resolveUrl(storeUrl, ctx.env()), ctx.storeDefaults()), ctx.clock());
        }
    }
}
