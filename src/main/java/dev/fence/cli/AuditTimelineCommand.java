package dev.fence.cli;

import dev.fence.audit.AuditFormat;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence audit timeline}: one resource's lease events and pushes in time order. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "timeline",
        mixinStandardHelpOptions = true,
        description = {
            "Print a resource's lease events and pushes in time order, the way an incident review",
            "lines them up: grants, expiries, releases, accepted, bumped and FENCED pushes."
        })
final class AuditTimelineCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    StoreOption store;

    @Mixin
    ServerOption server;

    @Option(
            names = "--since",
            paramLabel = "WHEN",
            description = "Start at WHEN: ISO-8601 instant or an age (30m, 2h).")
    String since;

    @Option(names = "--json", description = "Print one JSON object per line.")
    boolean json;

    AuditTimelineCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        String resource = target.resource();
        LedgerQuery q = new LedgerQuery(resource, null, null, null, Since.parse(since, ctx.clock()), null, 0);
        List<LedgerEvent> events = AuditCommand.query(ctx, store, server, q);
        if (json) {
            events.forEach(e -> ctx.out().println(Json.write(Json.event(e))));
        } else {
            ctx.out().println("timeline of " + resource + " (UTC)");
            AuditFormat.timeline(events, ctx.out());
        }
        return ExitCode.OK.code();
    }
}
