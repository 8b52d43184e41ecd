package dev.fence.cli;

import dev.fence.client.HolderStatus;
import dev.fence.core.LeaseOperations;
import dev.fence.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence status}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = {
            "Show the leases a holder holds or has lost; --prompt words them for an agent's context.",
            "",
            "Lists every resource the ledger says the holder was granted, and whether it still holds it (held,"
                    + " lapsed but not yet taken, released, or superseded by whom).",
            "",
            "--prompt prints one short dated sentence per resource, for putting back into an agent's context"
                    + " after a compaction, e.g. 'as of 14:40:05Z you hold no lease on git:app:refs/heads/main;"
                    + " your last token there was 33, superseded by 34 (held by agent-b).' Claims of holding a"
                    + " lease must come from here, never from a summary.",
            "",
            "With --server URL (or $FENCE_SERVER) it reads through fence serve: an agent credential may read"
                    + " only the holders it is bound to; an auditor's may read any.",
            "",
            "Example: fence status --holder agent-a --prompt"
        })
final class StatusCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    LeaseAccessOptions access;

    @Option(names = "--holder", required = true, paramLabel = "NAME", description = "The holder (agent name).")
    String holder;

    @Option(names = "--prompt", description = "Short dated sentences for an agent's context.")
    boolean prompt;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    @Option(
            names = "--since",
            paramLabel = "WHEN",
            description = "Only resources granted since then: an ISO-8601 instant or an age (2h, 7d)."
                    + " Default: as far back as the ledger goes.")
    String since;

    StatusCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        HolderStatus.Report report;
        try (LeaseOperations leases = access.open(ctx)) {
            report = HolderStatus.of(leases, ctx.clock(), holder, Since.parse(since, ctx.clock()));
        }
        List<String> sentences = HolderStatus.promptLines(report);
        if (json) {
            Map<String, Object> m = Json.object();
            m.put("holder", report.holder());
            m.put("at", Json.instant(report.at()));
            List<Map<String, Object>> leases = new ArrayList<>();
            for (HolderStatus.Entry e : report.entries()) {
                Map<String, Object> l = Json.object();
                l.put("resource", e.resource());
                l.put("state", e.state().name().toLowerCase(Locale.ROOT));
                l.put("token", e.token());
                l.put("current", e.current());
                l.put("currentHolder", e.currentHolder());
                l.put("currentLive", e.currentLive());
                l.put("expiresAt", Json.instant(e.expiresAt()));
                l.put("grantSha", e.grantSha());
                leases.add(l);
            }
            m.put("leases", leases);
            m.put("prompt", sentences);
            ctx.out().println(Json.write(m));
        } else if (prompt) {
            sentences.forEach(ctx.out()::println);
        } else {
            ctx.out().println("leases of " + holder + " as of " + report.at() + ":");
            if (report.entries().isEmpty()) {
                ctx.out().println("  none");
            }
            for (HolderStatus.Entry e : report.entries()) {
                ctx.out()
                        .println("  " + String.format("%-10s", e.state().name().toLowerCase(Locale.ROOT)) + " "
                                + e.resource() + ": " + detail(e));
            }
        }
        return ExitCode.OK.code();
    }

    private String detail(HolderStatus.Entry e) {
        return switch (e.state()) {
            case HELD -> "token " + e.token() + ", expires " + e.expiresAt() + " ("
                    + LeaseOutput.until(ctx, e.expiresAt()) + ")" + sha(e);
            case LAPSED -> "token " + e.token() + ", lapsed " + e.expiresAt() + " (not taken since; renew it)" + sha(e);
            case RELEASED -> "token " + e.token() + ", released " + e.expiresAt();
            case SUPERSEDED -> "your token " + e.token() + ", now " + e.current()
                    + (e.currentHolder() == null
                            ? " (a push without a token)"
                            : " (" + e.currentHolder() + (e.currentLive() ? "" : ", lapsed") + ")");
            case VOID -> "your token " + e.token()
                    + " is void: the store started a new generation since (acquire again)";
        };
    }

    private static String sha(HolderStatus.Entry e) {
        return e.grantSha() == null ? "" : ", expected remote SHA " + e.grantSha();
    }
}
