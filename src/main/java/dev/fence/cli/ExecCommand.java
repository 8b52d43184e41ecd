package dev.fence.cli;

import dev.fence.client.LeasedExec;
import dev.fence.client.Scheduler;
import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseOperations;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code fence exec}. */
@ExitCodes(
        value = {
            ExitCode.OK,
            ExitCode.USAGE,
            ExitCode.FENCED,
            ExitCode.BUSY,
            ExitCode.STORE_UNAVAILABLE,
            ExitCode.CONFIG,
            ExitCode.INTERNAL,
            ExitCode.COMMAND_FAILED
        },
        otherwise = ExecCommand.CHILD_STATUS)
@Command(
        name = "exec",
        mixinStandardHelpOptions = true,
        description = {
            "Run a command (a tool call) under a lease, renewing it while the command runs.",
            "",
            "Runs under the grant it is given: --grant-file FILE (as 'fence lease acquire --grant-file FILE'"
                    + " wrote it), or --token N, or $FENCE_TOKEN with $FENCE_PROOF. Without one it acquires a lease"
                    + " itself, but never over the holder's own current lease: that would replace the grant (and"
                    + " its recorded SHA) the harness holds, so fence exec refuses (exit 2) instead. It renews the"
                    + " lease before the command starts, every third of the TTL while it runs and once when it"
                    + " ends; the TTL is --ttl, else the grant's (with a bare token, --ttl is required), else 30s"
                    + " for a lease it acquires. Nothing renews"
                    + " the lease when no command runs: between tool calls it may lapse, and the fence catches a"
                    + " stale holder. Stdin, stdout and stderr are the command's. The command sees FENCE_RESOURCE,"
                    + " FENCE_HOLDER and FENCE_TOKEN (never the proof).",
            "",
            "If a renewal finds the lease lost (superseded, released), the FENCED message is printed on stderr"
                    + " at once and fence exits 3 when the command ends; --kill-on-loss stops the command at once."
                    + " Exits 4 (busy) without running anything when another holder's lease is live.",
            "",
            "Otherwise the exit code is the command's own status, unless that is a number fence uses for its own"
                    + " outcomes (2-6, 70) or 125: then fence exits 125, so that a command's own 3 is never read as"
                    + " FENCED. Whenever fence's exit code is not the command's status, the last line on stderr is"
                    + " 'fence exec: exit=<fence's code> child-exit=<the command's status>' (for a harness to read).",
            "",
            "With --server URL (or $FENCE_SERVER) the lease is acquired and renewed through fence serve, with the"
                    + " agent credential from $FENCE_CREDENTIAL or $FENCE_CREDENTIAL_FILE.",
            "",
            "Examples:",
            "  fence exec --grant-file ~/.fence/app-main.grant -- ./scripts/test.sh",
            "  fence exec --resource db/migrations --holder agent-a --ttl 30s -- ./migrate.sh up"
        })
final class ExecCommand implements Callable<Integer> {
    /** What --help says of the statuses passed through. */
    static final String CHILD_STATUS = "Any other number: the command's own exit status, passed through.";

    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Mixin
    GitRemoteOptions git;

    @Mixin
    GrantOptions grant;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            description = "Lease length each renewal asks for (default: the grant's TTL; 30s for a lease fence exec"
                    + " acquires).")
    String ttl;

    @Option(
            names = "--kill-on-loss",
            description = "Stop the command (SIGTERM, then SIGKILL) as soon as the lease is lost.")
    boolean killOnLoss;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "The command and its arguments, after '--'.")
    List<String> command;

    ExecCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws InterruptedException {
        GrantOptions.Held held = grant.resolve(ctx, target);
        if (held.given() && git.remote != null) {
            throw new InvalidInputException("--git-remote records a SHA at grant; under a grant nothing is granted");
        }
        var duration = held.given()
                ? held.ttl(ttl, "fence exec")
                : Durations.parsePositive("--ttl", ttl == null ? "30s" : ttl);
        String grantSha = held.given() ? null : git.grantSha(ctx, held.resource());
        var request = new LeasedExec.Request(
                held.resource(),
                held.holder(),
                duration,
                held.token(),
                held.proof(),
                grantSha,
                killOnLoss,
                command,
                ctx.cwd(),
                ctx.env());
        var streams = new LeasedExec.Streams(
                ctx.in(),
                ProcessStreams.isProcess(ctx.in()),
                ctx.out(),
                ProcessStreams.isProcess(ctx.out()),
                ctx.err(),
                ProcessStreams.isProcess(ctx.err()));
        LeasedExec.Outcome outcome;
        try (LeaseOperations leases = access.open(ctx);
                Scheduler scheduler = Scheduler.daemon("fence-lease-keeper")) {
            outcome = new LeasedExec(leases, ctx.clock(), scheduler).run(request, streams);
        }
        if (outcome instanceof LeasedExec.Outcome.Busy b) {
            return LeaseOutput.acquired(ctx, b.busy(), false);
        }
        var ran = (LeasedExec.Outcome.Ran) outcome;
        if (ran.lost() != null) {
            if (ran.started()) {
                ctx.err()
                        .println("fence: the lease on " + ran.resource() + " (token " + ran.token() + ") was lost"
                                + (ran.killed() ? "; the command was stopped" : " while the command ran")
                                + " (its exit code was " + ran.exitCode() + "); exiting 3 (FENCED)");
                ctx.err().println(statusLine(ExitCode.FENCED.code(), ran.exitCode()));
            }
            return ExitCode.FENCED.code();
        }
        int code = exitCode(ran.exitCode());
        if (code != ran.exitCode()) {
            ctx.err().println(statusLine(code, ran.exitCode()));
        }
        return code;
    }

    /**
     * fence's exit code for a command that ran to its end under a held lease: its own status, unless a harness
     * could mistake that for one of exec's own outcomes (the codes {@link ExitCodes} lists for exec).
     */
    static int exitCode(int childStatus) {
        for (ExitCode own : ExecCommand.class.getAnnotation(ExitCodes.class).value()) {
            if (own != ExitCode.OK && own.code() == childStatus) {
                return ExitCode.COMMAND_FAILED.code();
            }
        }
        return childStatus;
    }

    /** The machine line that gives both numbers when they differ; its format is documented in --help. */
    static String statusLine(int exit, int childStatus) {
        return "fence exec: exit=" + exit + " child-exit=" + childStatus;
    }
}
