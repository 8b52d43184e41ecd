package dev.fence.cli;

import dev.fence.audit.AuditFormat;
import dev.fence.audit.TimelinePage;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.Names;
import dev.fence.core.Resources;
import dev.fence.json.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence audit timeline}: lease events and pushes in time order, as text, JSON lines or a page. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "timeline",
        mixinStandardHelpOptions = true,
        description = {
            "Print a resource's lease events and pushes in time order, the way an incident review",
            "lines them up: grants, expiries, releases, accepted, bumped and FENCED pushes.",
            "",
            "--html writes one self-contained HTML page instead (redirect it to a file): an SVG timeline",
            "per resource, one lane per holder, a bar per lease (held, then lapsed), a mark per push,",
            "tooltips, and the same events as a table filterable by type and holder. It fetches nothing.",
            "With --html the resource is optional: --repo ID alone draws every branch of the repository,",
            "and no selection at all draws every resource in the window.",
            "",
            "Examples:",
            "  fence audit timeline --repo billing --ref main",
            "  fence audit timeline --html --repo billing --since 2h > incident.html",
            "  fence audit timeline --html --resource db/migrations \\",
            "      --commit-url 'https://git.example.com/{repo}/-/commit/{sha}' > page.html"
        })
final class AuditTimelineCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(
            names = "--resource",
            paramLabel = "NAME",
            description = "Resource name, e.g. db/migrations or git:<repo-id>:refs/heads/main. With --html it may"
                    + " be given more than once, and together with --repo.")
    List<String> resources = new ArrayList<>();

    @Option(
            names = "--repo",
            paramLabel = "ID",
            description = "Repository id as the git host's hook sees it. Use with --ref (with --html, alone: every"
                    + " branch of the repository).")
    String repo;

    @Option(
            names = {"--ref", "--branch"},
            paramLabel = "REF",
            description = "Full ref name (refs/heads/main) or branch name (main). Use with --repo.")
    String ref;

    @Mixin
    StoreOption store;

    @Mixin
    ServerOption server;

    @Option(
            names = "--since",
            paramLabel = "WHEN",
            description = "Start at WHEN: ISO-8601 instant or an age (30m, 2h).")
    String since;

    @Option(
            names = "--until",
            paramLabel = "WHEN",
            description = "End at WHEN: ISO-8601 instant or an age (30m, 2h) (default: now, the last event).")
    String until;

    @Option(names = "--json", description = "Print one JSON object per line.")
    boolean json;

    @Option(names = "--html", description = "Write the incident page (HTML) to standard output.")
    boolean html;

    @Option(
            names = "--commit-url",
            paramLabel = "TEMPLATE",
            description = "With --html: link each commit id through TEMPLATE, an http(s) URL with {sha} (and"
                    + " optionally {repo}), e.g. https://gitlab.example.com/{repo}/-/commit/{sha}.")
    String commitUrl;

    AuditTimelineCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        if (html && json) {
            throw new InvalidInputException("give --html or --json, not both");
        }
        if (commitUrl != null && !html) {
            throw new InvalidInputException("--commit-url goes with --html");
        }
        Instant from = Since.parse(since, ctx.clock());
        Instant to = Since.parse("--until", until, ctx.clock());
        if (from != null && to != null && to.isBefore(from)) {
            throw new InvalidInputException("--until is before --since");
        }
        if (html) {
            String template = TimelinePage.commitUrl(commitUrl);
            Set<LedgerEvent> events = new LinkedHashSet<>();
            List<String> names = new ArrayList<>();
            for (LedgerQuery q : selection(from)) {
                events.addAll(AuditCommand.query(ctx, store, server, q.until(to)));
                names.add(describe(q));
            }
            String title = "fence audit timeline: " + String.join(", ", names);
            ctx.out()
                    .print(TimelinePage.render(
                            List.copyOf(events),
                            new TimelinePage.Options(
                                    title, from, to, template, ctx.clock().instant(), null, null)));
            ctx.out().flush();
            return ExitCode.OK.code();
        }
        if (resources.size() > 1) {
            throw new InvalidInputException("the text timeline takes one --resource; --html draws several");
        }
        ResourceOptions one = new ResourceOptions();
        one.resource = resources.isEmpty() ? null : resources.get(0);
        one.repo = repo;
        one.ref = ref;
        String resource = one.resource();
        LedgerQuery q = new LedgerQuery(resource, null, null, null, from, null, 0).until(to);
        List<LedgerEvent> events = AuditCommand.query(ctx, store, server, q).stream()
                .filter(e -> to == null || !e.at().isAfter(to))
                .toList();
        if (json) {
            events.forEach(e -> ctx.out().println(Json.write(Json.event(e))));
        } else {
            ctx.out().println("timeline of " + resource + " (UTC)");
            AuditFormat.timeline(events, ctx.out());
        }
        return ExitCode.OK.code();
    }

    /**
     * The page's selection: each {@code --resource}, and a repository's branch or all its branches; with
     * neither, everything in the window.
     */
    private List<LedgerQuery> selection(Instant from) {
        if (ref != null && repo == null) {
            throw new InvalidInputException("--ref goes with --repo ID");
        }
        List<LedgerQuery> out = new ArrayList<>();
        for (String r : new LinkedHashSet<>(resources)) {
            out.add(new LedgerQuery(Names.require("resource", r), null, null, null, from, null, 0));
        }
        if (repo != null && ref != null) {
            out.add(new LedgerQuery(Resources.forRef(repo, ref), null, null, null, from, null, 0));
        } else if (repo != null || out.isEmpty()) {
            out.add(new LedgerQuery(null, repo, null, null, from, null, 0));
        }
        return out;
    }

    private static String describe(LedgerQuery q) {
        if (q.resource() != null) {
            return q.resource();
        }
        return q.repo() != null ? "repository " + q.repo() : "every resource";
    }
}
