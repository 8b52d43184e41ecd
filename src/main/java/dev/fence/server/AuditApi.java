package dev.fence.server;

import dev.fence.audit.TimelinePage;
import dev.fence.core.Durations;
import dev.fence.core.EventType;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerAnswer;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.Names;
import dev.fence.core.RefNames;
import dev.fence.core.StoreUnavailableException;
import dev.fence.json.Json;
import dev.fence.server.client.RemoteAudit;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code /v1/audit}, {@code /v1/audit/timeline} and {@code /v1/leases/grants}: ledger queries, as {@code
 * fence audit --json} prints them; and {@code /audit}, the incident page for browsers.
 */
final class AuditApi {
    private static final int DEFAULT_LIMIT = 1000;

    /**
     * The most events one answer of {@code /v1/audit} or {@code /v1/audit/timeline} carries. A query that
     * matches more and asks for all of them ({@code limit=0}, the timeline) is refused with what to do
     * instead, rather than read whole into the server's memory: a million events is more than a gigabyte of
     * objects and JSON, enough to stop the verdicts of a server with a small heap. ({@code
     * /v1/leases/grants} is one holder's grants, which its lease keepers read whole to renew them.)
     */
    static final int MAX_ANSWER_EVENTS = RemoteAudit.MAX_ANSWER_EVENTS;

    /** What a refused query can do instead, by route: each names only parameters its route takes. */
    private static final String NARROW_AUDIT = "narrow the query (resource, repo and ref, holder, type, since), or"
            + " read it in time windows of fewer events with since and until (both inclusive: an event at a"
            + " window's edge comes in both windows; seq tells them apart)";

    private static final String NARROW_TIMELINE =
            "narrow it with since, or read it through /v1/audit in time windows with since and until";

    /** The page's window when none is asked for. */
    static final String PAGE_WINDOW = "24h";

    /** At most this many of the window's newest events are read to list its resources. */
    private static final int PICKER_EVENTS = 20_000;

    /** At most this many of a resource's newest events in the window are drawn. */
    private static final int PAGE_EVENTS = 50_000;

    private static final String HTML = "text/html; charset=utf-8";

    private final LeaseStore store;
    private final StoreCalls calls;
    private final Clock clock;
    private final ServerMetrics metrics;
    private final String commitUrl;

    /** @param commitUrl the page's commit link template (checked), or null for no links */
    AuditApi(LeaseStore store, StoreCalls calls, Clock clock, ServerMetrics metrics, String commitUrl) {
        this.store = store;
        this.calls = calls;
        this.clock = clock;
        this.metrics = metrics;
        this.commitUrl = commitUrl;
    }

    Reply query(Call call) {
        Form q = known(call.query(), QUERY_PARAMETERS);
        Set<EventType> types = EnumSet.noneOf(EventType.class);
        String typeList = q.get("type");
        if (typeList != null && !typeList.isEmpty()) {
            for (String t : typeList.split(",")) {
                types.add(EventType.parse(t.strip()));
            }
        }
        if (flag(q.get("rejected"))) {
            types.add(EventType.REJECT);
        }
        int limit = limit(q.get("limit"));
        String ref = q.get("ref");
        LedgerQuery query = new LedgerQuery(
                        optionalName("resource", q.get("resource")),
                        optionalName("repo", q.get("repo")),
                        ref == null ? null : RefNames.full(ref),
                        optionalName("holder", q.get("holder")),
                        since(q.get("since")),
                        types,
                        limit)
                .until(instant("until", q.get("until")));
        LedgerAnswer answer = bounded(query, NARROW_AUDIT);
        Reply reply = events(call, answer.events());
        // The body's shape (lines, or a bare array) has no room for it: a header says that older events
        // matched too, so that an auditor's newest N do not read as all there is.
        return answer.truncated() ? reply.withHeader(RemoteAudit.TRUNCATED_HEADER, "true") : reply;
    }

    /**
     * The events of {@code query}, at most {@link #MAX_ANSWER_EVENTS}: a larger limit is refused before the
     * store is asked, and "all" is asked for one more than that, to tell "all of them" from "too many". A
     * limit is asked for one more as well, to tell whether the answer left older events out.
     *
     * @param instead what the caller can do instead, for the refusal
     * @throws InvalidInputException when more would be answered than one answer carries
     */
    private LedgerAnswer bounded(LedgerQuery query, String instead) {
        if (query.since() != null && query.until() != null && query.until().isBefore(query.since())) {
            // As the incident page says: an empty answer would read as "nothing happened".
            throw new InvalidInputException("until (" + query.until() + ") is before since (" + query.since() + ")");
        }
        if (query.limit() > MAX_ANSWER_EVENTS) {
            throw new InvalidInputException("limit is at most " + MAX_ANSWER_EVENTS + " events per request; got "
                    + query.limit() + "; " + instead);
        }
        if (query.limit() > 0) {
            return LedgerAnswer.of(query, ledgerRead(LedgerAnswer.probe(query), instead));
        }
        List<LedgerEvent> events = ledgerRead(query.withLimit(MAX_ANSWER_EVENTS + 1), instead);
        if (events.size() > MAX_ANSWER_EVENTS) {
            throw new InvalidInputException(
                    "more than " + MAX_ANSWER_EVENTS + " events match, more than one answer carries; " + instead);
        }
        return new LedgerAnswer(events, false);
    }

    /**
     * An auditor's read, within the store timeout like every store call; past it, the 503 says what a
     * large query can do, since the store is then most likely busy with the query, not down.
     */
    private List<LedgerEvent> ledgerRead(LedgerQuery query, String instead) {
        try {
            return calls.call("audit", () -> store.query(query));
        } catch (StoreUnavailableException e) {
            if (e.getMessage() == null || !e.getMessage().contains("did not answer within")) {
                throw e;
            }
            throw new StoreUnavailableException(
                    e.getMessage() + "; a ledger query of many events can take longer: " + instead, e);
        }
    }

    /**
     * {@code GET /audit}: the incident page ({@link TimelinePage}) of one resource over a time window,
     * with a picker of the resources active in the window. Query parameters: {@code resource} (default:
     * the most recently active one), {@code since} (ISO-8601 or an age; default {@value #PAGE_WINDOW}),
     * {@code until} (default: now).
     */
    Reply page(Call call) {
        Form q = call.query();
        String sinceText = blankToNull(q.get("since"));
        String untilText = blankToNull(q.get("until"));
        Instant from = since(sinceText == null ? PAGE_WINDOW : sinceText);
        Instant to = untilText == null ? null : instant("until", untilText);
        if (to != null && to.isBefore(from)) {
            throw new InvalidInputException("until is before since");
        }
        String picked = optionalName("resource", q.get("resource"));
        LedgerQuery window = new LedgerQuery(null, null, null, null, from, null, PICKER_EVENTS).until(to);
        List<LedgerEvent> recent = calls.call("audit", () -> store.query(window));
        // The picker lists what was active in the window, most recent first.
        Map<String, Instant> latest = new LinkedHashMap<>();
        for (LedgerEvent e : recent) {
            latest.merge(e.resource(), e.at(), (a, b) -> a.isAfter(b) ? a : b);
        }
        List<String> resources = new ArrayList<>(latest.keySet());
        resources.sort(
                Comparator.comparing((String r) -> latest.get(r)).reversed().thenComparing(r -> r));
        String selected = picked != null ? picked : resources.isEmpty() ? null : resources.get(0);
        if (selected != null && !resources.contains(selected)) {
            resources.add(0, selected);
        }
        List<LedgerEvent> events = List.of();
        String note = null;
        if (selected != null) {
            // Bounded above as well: the newest events of the window, however many came after it.
            LedgerQuery one = new LedgerQuery(selected, null, null, null, from, null, PAGE_EVENTS).until(to);
            LedgerAnswer drawn = LedgerAnswer.of(one, calls.call("audit", () -> store.query(LedgerAnswer.probe(one))));
            events = drawn.events();
            if (drawn.truncated()) {
                note = "Only the newest " + PAGE_EVENTS + " events of this window are shown: narrow the window.";
            }
        }
        String html = TimelinePage.render(
                events,
                new TimelinePage.Options(
                        "fence audit: " + (selected == null ? "no activity in this window" : selected),
                        from,
                        to,
                        commitUrl,
                        clock.instant(),
                        new TimelinePage.Picker(resources, selected, sinceText, untilText),
                        note));
        return new Reply(200, HTML, html.getBytes(StandardCharsets.UTF_8));
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    Reply timeline(Call call) {
        Form q = call.query();
        known(q, TIMELINE_PARAMETERS);
        String resource = Params.of(q).resource();
        LedgerQuery query = new LedgerQuery(resource, null, null, null, since(q.get("since")), null, 0);
        return events(call, bounded(query, NARROW_TIMELINE).events());
    }

    /**
     * {@code GET /v1/leases/grants}: the {@code GRANT} events of one holder (what {@code fence status}
     * reads), for an agent credential bound to that holder, an auditor or an admin.
     */
    Reply grants(Call call) {
        try {
            Reply r = grantsOf(call);
            metrics.leaseOperation("grants", "ok");
            return r;
        } catch (HttpError e) {
            metrics.leaseOperation("grants", e.status() == 403 ? "forbidden" : "invalid");
            throw e;
        } catch (InvalidInputException e) {
            metrics.leaseOperation("grants", "invalid");
            throw e;
        } catch (StoreUnavailableException e) {
            metrics.leaseOperation("grants", "store-unavailable");
            throw e;
        }
    }

    private Reply grantsOf(Call call) {
        Form q = known(call.query(), GRANTS_PARAMETERS);
        String holder = Names.require("holder", required(q, "holder"));
        if (call.caller().role() == Role.AGENT) {
            LeaseApi.authorize(call, holder, metrics);
        }
        String resource = null;
        if (q.get("resource") != null || q.get("repo") != null || q.get("ref") != null) {
            resource = Params.of(q).resource();
        }
        LedgerQuery query = new LedgerQuery(
                resource, null, null, holder, since(q.get("since")), Set.of(EventType.GRANT), limit(q.get("limit")));
        return events(call, calls.call("grants", () -> store.query(query)));
    }

    private static final Set<String> QUERY_PARAMETERS =
            Set.of("resource", "repo", "ref", "holder", "type", "rejected", "since", "until", "limit");
    private static final Set<String> TIMELINE_PARAMETERS = Set.of("resource", "repo", "ref", "since");
    private static final Set<String> GRANTS_PARAMETERS = Set.of("holder", "resource", "repo", "ref", "since", "limit");

    /**
     * {@code q}, when it names only {@code allowed} parameters: a misspelt filter ({@code resouce=}) would
     * otherwise be dropped, and the answer would be every event instead of none.
     */
    private static Form known(Form q, Set<String> allowed) {
        for (String name : q.names()) {
            if (!allowed.contains(name)) {
                throw new InvalidInputException("unknown query parameter '" + name + "'; this route takes "
                        + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        }
        return q;
    }

    private static String required(Form q, String name) {
        String v = q.get(name);
        if (v == null || v.isEmpty()) {
            throw new InvalidInputException("'" + name + "' is required");
        }
        return v;
    }

    /** JSON lines by default; one JSON array for {@code Accept: application/json}. */
    private static Reply events(Call call, List<LedgerEvent> events) {
        String accept = call.header("Accept");
        List<Object> shaped = events.stream().map(e -> (Object) Json.event(e)).toList();
        if (accept != null && accept.toLowerCase(Locale.ROOT).startsWith("application/json")) {
            return Reply.json(200, shaped);
        }
        return Reply.jsonLines(shaped);
    }

    private Instant since(String text) {
        return instant("since", text);
    }

    /** An ISO-8601 instant or an age before now, as query parameter {@code name}; null when absent. */
    private Instant instant(String name, String text) {
        return text == null || text.isEmpty() ? null : Durations.instantOrAge(name, text, clock.instant());
    }

    private static int limit(String text) {
        if (text == null || text.isEmpty()) {
            return DEFAULT_LIMIT;
        }
        try {
            int n = Integer.parseInt(text);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new InvalidInputException("limit must be 0 (all) or a positive whole number; got '" + text + "'");
    }

    private static boolean flag(String text) {
        if (text == null) {
            return false;
        }
        return switch (text) {
            case "", "1", "true", "yes" -> true;
            case "0", "false", "no" -> false;
            default -> throw new InvalidInputException("rejected must be true or false; got '" + text + "'");
        };
    }

    private static String optionalName(String what, String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        return Names.require(what, value);
    }
}
