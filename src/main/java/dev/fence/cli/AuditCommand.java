package dev.fence.cli;

import dev.fence.audit.AuditFormat;
import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerAnswer;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import dev.fence.server.client.RemoteAudit;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence audit}: query the ledger. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "audit",
        mixinStandardHelpOptions = true,
        description = {
            "Query the audit ledger: every grant, release, observed expiry, renewal after a lapse, and",
            "every accepted, bumped or rejected push, with its reason. A table by default; --json prints",
            "JSON lines.",
            "Answers 'who overwrote this branch, and why was it allowed?'.",
            "When more events match than --limit keeps, the newest are printed and a notice on",
            "standard error says that older ones were left out (the exit code is still 0)."
        },
        subcommands = {AuditTimelineCommand.class})
final class AuditCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    StoreOption store;

    @Mixin
    ServerOption server;

    @Mixin
    AuditFilter filter;

    @Option(names = "--json", description = "Print one JSON object per line.")
    boolean json;

    AuditCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        LedgerQuery q = filter.query(ctx);
        LedgerAnswer answer = answer(ctx, store, server, q);
        List<LedgerEvent> events = answer.events();
        if (json) {
            events.forEach(e -> ctx.out().println(Json.write(Json.event(e))));
        } else {
            AuditFormat.table(events, ctx.out());
        }
        if (answer.truncated()) {
            // Not in the output itself: JSON lines have no place for it, and a table piped on should
            // stay rows. An auditor who misses older events would read the newest N as all there is.
            ctx.out().flush();
            ctx.err()
                    .println("fence audit: showing the " + q.limit() + " newest of more than " + q.limit()
                            + " matching events; narrow the query (--repo, --ref, --holder, --type, --since,"
                            + " --until) or pass --limit 0 for all");
            ctx.err().flush();
        }
        return ExitCode.OK.code();
    }

    /**
     * Runs a ledger query through the server or on the store, asking for one event more than its limit to
     * tell whether older events were left out.
     */
    static LedgerAnswer answer(Context ctx, StoreOption store, ServerOption server, LedgerQuery q) {
        String url = server.resolve(ctx, store);
        if (url != null) {
            return new RemoteAudit(ServerOption.client(ctx, url)).answer(q);
        }
        try (LeaseStore s = store.open(ctx)) {
            return LedgerAnswer.of(q, s.query(LedgerAnswer.probe(q)));
        }
    }

    /** Runs a ledger query through the server or on the store. */
    static List<LedgerEvent> query(Context ctx, StoreOption store, ServerOption server, LedgerQuery q) {
        String url = server.resolve(ctx, store);
        if (url != null) {
            return new RemoteAudit(ServerOption.client(ctx, url)).query(q);
        }
        try (LeaseStore s = store.open(ctx)) {
            return s.query(q);
        }
    }

    /** The filters {@code audit} understands. */
    static final class AuditFilter {
        @Option(names = "--repo", paramLabel = "ID", description = "Only this repository id.")
        String repo;

        @Option(names = "--ref", paramLabel = "REF", description = "Only this ref (full name or branch).")
        String ref;

        @Option(names = "--resource", paramLabel = "NAME", description = "Only this resource.")
        String resource;

        @Option(names = "--holder", paramLabel = "NAME", description = "Only events of this lease holder.")
        String holder;

        @Option(
                names = "--since",
                paramLabel = "WHEN",
                description =
                        "Only events since WHEN: an ISO-8601 instant (2026-11-29T14:00:00Z) or an age (30m, 2h, 7d).")
        String since;

        @Option(
                names = "--until",
                paramLabel = "WHEN",
                description = "Only events at or before WHEN (the same forms as --since): with --since, a time"
                        + " window (both ends inclusive).")
        String until;

        @Option(names = "--rejected", description = "Only rejected pushes.")
        boolean rejected;

        @Option(
                names = "--type",
                paramLabel = "TYPE",
                split = ",",
                description = "Only these event types: ${COMPLETION-CANDIDATES}.")
        Set<EventType> types;

        @Option(
                names = "--limit",
                paramLabel = "N",
                defaultValue = "1000",
                description = "At most the newest N events (default: ${DEFAULT-VALUE}; 0 = all); when more match,"
                        + " standard error says so. Through"
                        + " --server at most 100000 (more is refused): narrow the query, or read it in time windows"
                        + " with --since and --until.")
        int limit;

        LedgerQuery query(Context ctx) {
            Set<EventType> t = types == null ? EnumSet.noneOf(EventType.class) : EnumSet.copyOf(types);
            if (rejected) {
                t.add(EventType.REJECT);
            }
            if (limit < 0) {
                throw new dev.fence.core.InvalidInputException("--limit must be 0 or more");
            }
            String fullRef = ref == null ? null : dev.fence.core.RefNames.full(ref);
            Instant from = Since.parse(since, ctx.clock());
            Instant to = Since.parse("--until", until, ctx.clock());
            if (from != null && to != null && to.isBefore(from)) {
                throw new dev.fence.core.InvalidInputException("--until is before --since");
            }
            return new LedgerQuery(resource, repo, fullRef, holder, from, t, limit).until(to);
        }
    }
}
