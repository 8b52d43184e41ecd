package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.demo.Demo;
import dev.fence.demo.FenceRunner;
import dev.fence.demo.Progress;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence demo}: the options; the replay and what it sets up are {@link Demo}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Replay the incident fence exists for, in compressed time, against a real bare repository with"
                    + " fence's real hook and a real database: agent A's leases (the branch and the migrations)"
                    + " lapse while it is paused, agent B takes over, applies migration 0042 with fence migrate"
                    + " and pushes; A's stale 'fence migrate reapply 0042', its stale push and each workaround it"
                    + " tries (the token number from the message, a force push, no token, a rebase keeping its"
                    + " side of the conflict, renumbering the migration to 0043, a fresh lease) are FENCED, and"
                    + " A re-reads the branch and the database, finds its goal met and stops. Ends with the"
                    + " ledger timelines (and, with --html FILE, the incident page).",
            "",
            "Runs on a SQLite lease store and a SQLite database in a temporary directory unless --store or"
                    + " --db is given. Exits 0 only when every expected outcome happened, so it doubles as a"
                    + " smoke test.",
            "",
            "--server replays the same story through fence serve: every lease command, fence push, fence"
                    + " status and the timeline go to the server, and the bare repository's hooks are the curl"
                    + " shim asking it with a hook credential. Each agent has its own agent credential, bound to"
                    + " its holder name.",
            "--server auto starts an in-process fence serve on 127.0.0.1 (a free port) with its own credentials"
                    + " and policy, on a SQLite file in the demo's directory (or on --store URL), and stops it"
                    + " afterwards: nothing to set up.",
            "--server URL --credentials FILE uses a running fence serve whose credentials file is FILE (run"
                    + " the demo where the server runs): the demo adds short-lived credentials for its agents,"
                    + " hook and auditor to FILE and revokes them when it ends.",
            "--server URL alone uses a running fence serve with the admin credential from $FENCE_CREDENTIAL or"
                    + " $FENCE_CREDENTIAL_FILE for every role.",
            "fence migrate has no server mode yet, so with --server the migration steps are skipped (each"
                    + " says so where it would run) and --db is refused.",
            "A running server judges with its own policy (fence serve --config): where it treats agent-*"
                    + " pushers as agents ('agent-pushers = agent-*', as the demo's own server does) the tokenless"
                    + " force-push is refused with token-required, elsewhere with tokenless-overwrite.",
            "",
            "Examples:",
            "  fence demo",
            "  fence demo --html incident.html",
            "  fence demo --db postgresql://postgres@127.0.0.1:5432/fence_demo",
            "  fence demo --server auto",
            "  fence demo --server http://127.0.0.1:8700 --credentials /etc/fence/credentials"
        })
final class DemoCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(
            names = "--store",
            paramLabel = "URL",
            description = "Store to replay against (default: a new SQLite file in the demo's directory); with"
                    + " --server auto, the in-process server's store.")
    String store;

    @Option(
            names = "--db",
            paramLabel = "URL",
            description = "The database the migration part runs on, e.g. postgresql://user@host:port/db: an empty"
                    + " database of the demo's own, which keeps what the replay made there (default: a new SQLite"
                    + " file in the demo's directory). Direct mode only.")
    String db;

    @Option(
            names = "--server",
            paramLabel = "URL|auto",
            description = "Replay through fence serve at URL, or through an in-process one ('auto').")
    String server;

    @Option(
            names = "--credentials",
            paramLabel = "FILE",
            description = "With --server URL: the server's credentials file, where the demo adds its own"
                    + " short-lived credentials (revoked when it ends). Without it the credential comes from"
                    + " $FENCE_CREDENTIAL or $FENCE_CREDENTIAL_FILE and must be an admin one.")
    Path credentials;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "3s",
            description = "The compressed lease length (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(
            names = "--html",
            paramLabel = "FILE",
            description = "End by writing the incident page to FILE: the replay's ledger as fence audit timeline"
                    + " --html draws it (lanes per agent, leases held and lapsed, every push and why it was"
                    + " FENCED). Open it in a browser.")
    Path html;

    @Option(names = "--keep", description = "Keep the demo's directory (repositories, clones, store) afterwards.")
    boolean keep;

    @Option(
            names = "--progress",
            paramLabel = "WHEN",
            defaultValue = "auto",
            description = "Progress line on stderr: auto (on a terminal), always, never (default: ${DEFAULT-VALUE}).")
    String progress;

    DemoCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws IOException {
        var request = new Demo.Request(
                store,
                server,
                credentials,
                db,
                Durations.parsePositive("--ttl", ttl),
                keep,
                ServerOption.CLIENT_TIMEOUT,
                html == null ? null : ctx.cwd().resolve(html));
        boolean ok = new Demo(ctx.out(), ctx.err(), ctx.env(), ctx.clock(), inProcess()).run(request, progress());
        return ok ? ExitCode.OK.code() : ExitCode.INTERNAL.code();
    }

    /** fence's own commands for the replay, run in this process with their output captured. */
    private FenceRunner inProcess() {
        return (env, cwd, args) -> {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            Context c = new Context(
                    new ByteArrayInputStream(new byte[0]),
                    new PrintWriter(out),
                    new PrintWriter(err),
                    env,
                    ctx.clock(),
                    cwd);
            int code = Main.run(c, args);
            return new FenceRunner.Result(code, out.toString(), err.toString());
        };
    }

    private Progress progress() {
        boolean show =
                switch (progress) {
                    case "always" -> true;
                    case "never" -> false;
                    case "auto" -> ProcessStreams.isTerminal(ctx.err())
                            && ctx.env().get("CI") == null
                            && !"dumb".equals(ctx.env().getOrDefault("TERM", "dumb"));
                    default -> throw new InvalidInputException(
                            "--progress must be auto, always or never; got '" + progress + "'");
                };
        return show ? Progress.terminal(ctx.err()) : Progress.none();
    }
}
