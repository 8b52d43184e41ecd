package dev.fence.cli;

import dev.fence.client.FencedPush;
import dev.fence.client.GitRemotes;
import dev.fence.client.PushOutcome;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseOperations;
import dev.fence.core.ObjectIds;
import dev.fence.core.Resources;
import dev.fence.json.Json;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence push}. */
@ExitCodes({
    ExitCode.OK,
    ExitCode.REJECTED,
    ExitCode.USAGE,
    ExitCode.FENCED,
    ExitCode.STORE_UNAVAILABLE,
    ExitCode.CONFIG,
    ExitCode.INTERNAL
})
@Command(
        name = "push",
        mixinStandardHelpOptions = true,
        description = {
            "Push a branch under the holder's lease, or refuse with FENCED.",
            "",
            "Under the grant it is given (--grant-file FILE as 'fence lease acquire --grant-file FILE' wrote it,"
                    + " or --token N, or $FENCE_TOKEN with $FENCE_PROOF) or else the holder's current lease,"
                    + " checks that the holder still holds the branch's lease with that token (in the store, or with --server through fence"
                    + " serve, which then also issues the proof: the agent holds only its API credential); if"
                    + " not, prints the FENCED message"
                    + " and exits 3 without pushing. Otherwise pushes the local branch (default: the current one)"
                    + " to refs/heads/<branch> on the remote with -o fence=<token> -o fence-proof=<proof> (when"
                    + " the remote takes push options) and an explicit expected old id: the SHA the lease recorded"
                    + " ('fence lease acquire --git-remote'), never your remote-tracking ref. There is no --force:"
                    + " a rewrite is allowed only over what the lease recorded. After a successful push the"
                    + " lease's recorded SHA moves to the new tip.",
            "",
            "Exits 3 (FENCED) when the lease is gone, when the remote moved since the lease recorded it"
                    + " (reason=remote-changed, naming the remote's tip and the current holder), or when the"
                    + " remote's fence hook refuses the token; 1 when the remote rejects for another reason; 6"
                    + " when the lease recorded no SHA (acquire it with --git-remote). The proof is never printed.",
            "",
            "Examples (the first pushes the current branch to origin):",
            "  fence push --repo app --holder agent-a",
            "  fence push --grant-file ~/.fence/app-main.grant --remote origin",
            "  fence push --resource git:app:refs/heads/main --remote origin --holder agent-a --json",
            "  FENCE_CREDENTIAL_FILE=~/.config/fence/agent-a fence push --server https://fence.internal:8700"
                    + " --repo app --branch main --holder agent-a"
        })
final class PushCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Option(
            names = "--remote",
            paramLabel = "NAME|URL",
            defaultValue = "origin",
            description = "Remote name of the clone, or a URL (default: ${DEFAULT-VALUE}).")
    String remote;

    @Mixin
    GrantOptions grant;

    @Option(names = "--clone", paramLabel = "PATH", description = "The clone (default: the current directory).")
    Path clone;

    @Option(names = "--json", description = "Print one JSON object (status pushed|fenced|rejected).")
    boolean json;

    private String holder;

    PushCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        Path dir = clone == null ? ctx.cwd() : ctx.cwd().resolve(clone).normalize();
        GrantOptions.Held file = grant.fromFile(ctx);
        if (file != null && target.resource != null && !target.resource.equals(file.resource())) {
            throw new InvalidInputException(
                    "the grant in " + grant.grantFile + " is for " + file.resource() + ", not " + target.resource);
        }
        if (file != null
                && target.repo != null
                && !Resources.parse(file.resource())
                        .map(g -> g.repoId().equals(target.repo))
                        .orElse(false)) {
            throw new InvalidInputException(
                    "the grant in " + grant.grantFile + " is for " + file.resource() + ", not repo " + target.repo);
        }
        var base = new FencedPush.Request(
                dir,
                remote,
                target.ref,
                file != null ? file.resource() : target.resource,
                target.repo,
                file != null ? file.holder() : grant.holder);
        PushOutcome outcome;
        try (LeaseOperations leases = access.open(ctx)) {
            FencedPush push = new FencedPush(leases, new GitRemotes(ctx.env()));
            GrantOptions.Held held = file != null ? file : grant.resolve(ctx, push.resourceOf(base));
            holder = held.holder();
            outcome = push.push(base.under(held.holder(), held.token(), held.proof()));
        }
        if (json) {
            ctx.out().println(Json.write(json(outcome)));
        }
        if (outcome instanceof PushOutcome.Pushed p) {
            p.lines().forEach(ctx.err()::println);
            if (!json) {
                ctx.out()
                        .println((p.upToDate() ? "up to date: " : "pushed ") + p.ref() + " under token " + p.token()
                                + ": " + ObjectIds.abbreviate(p.oldSha()) + " -> " + ObjectIds.abbreviate(p.newSha())
                                + (p.grantShaMoved() ? "" : " (the lease was lost right after; see above)"));
            }
            return ExitCode.OK.code();
        }
        outcome.lines().forEach(ctx.err()::println);
        return outcome instanceof PushOutcome.Fenced ? ExitCode.FENCED.code() : ExitCode.REJECTED.code();
    }

    private Map<String, Object> json(PushOutcome o) {
        Map<String, Object> m = Json.object();
        m.put(
                "status",
                o instanceof PushOutcome.Pushed ? "pushed" : o instanceof PushOutcome.Fenced ? "fenced" : "rejected");
        m.put("resource", o.resource());
        m.put("ref", o.ref());
        m.put("holder", holder);
        m.put("token", o.token());
        m.put("oldSha", o.oldSha());
        m.put("newSha", o.newSha());
        if (o instanceof PushOutcome.Pushed p) {
            m.put("upToDate", p.upToDate());
            m.put("pushOptions", p.withOptions());
            m.put("grantShaMoved", p.grantShaMoved());
        } else if (o instanceof PushOutcome.Fenced f) {
            m.put("attempted", f.attempted());
        } else if (o instanceof PushOutcome.Rejected r) {
            m.put("remoteStatus", r.status());
        }
        m.put("message", o.lines());
        return m;
    }
}
