package dev.fence.audit;

import dev.fence.core.InvalidInputException;
import dev.fence.core.LedgerEvent;
import dev.fence.core.ObjectIds;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The incident page: one self-contained HTML document with an SVG timeline per resource and the same
 * events as a filterable table. {@code fence audit timeline --html} writes it and {@code fence serve}
 * answers it at {@code /audit}; both call {@link #render}.
 *
 * <p>The page fetches nothing: its CSS and script are inline and allowed by hash in its own
 * Content-Security-Policy (which also forbids every connection), its drawing is inline SVG. Everything
 * that comes from the ledger (holder names, refs, reasons, details are chosen by whoever pushed or
 * leased) is HTML-escaped into text or attribute values; the script reads it back from {@code data-}
 * attributes and writes it with {@code textContent}, so no ledger text is ever parsed as markup or code.
 *
 * <p>Marks that would overlap (closer than {@link #CLUSTER_PX} on one lane) are drawn as one counted
 * cluster whose tooltip breaks the count down by kind, so 10,000 events stay readable; the table below
 * keeps every event.
 *
 * <p>Elements carry stable attributes for tools and tests: lanes {@code data-lane} (and {@code
 * data-holder} for a holder's lane), bars {@code data-kind="lease"} with {@code data-token}, {@code
 * data-t}, {@code data-held-until}, {@code data-t-end} and {@code data-end}, marks {@code data-kind}
 * (accept, bump, allow, fenced, rejected, landed, or cluster with {@code data-count}), {@code data-t},
 * {@code data-token}, {@code data-old}, {@code data-new}, {@code data-pusher}, {@code data-reason}.
 */
public final class TimelinePage {
    /** Marks on one lane closer than this (in the plot's 1000 units) are drawn as one cluster. */
    static final double CLUSTER_PX = 7;

    private static final int GUTTER = 170;

    /** At most this many characters of a lane's name fit the gutter left of the plot. */
    static final int LABEL_MAX = 22;

    private static final int PLOT = 1000;
    private static final int RIGHT = 24;
    private static final int AXIS = 30;
    private static final int LANE = 24;

    /** Precedence when a cluster holds several kinds: the one an incident review looks for first. */
    private static final List<String> SEVERITY = List.of("fenced", "rejected", "bump", "allow", "accept", "landed");

    private static final Map<String, String> LEGEND = new java.util.LinkedHashMap<>();

    static {
        LEGEND.put("lease", "lease held");
        LEGEND.put("lapsed", "lease lapsed (expired, not yet superseded or renewed)");
        LEGEND.put("accept", "accepted push");
        LEGEND.put("landed", "landed (seen on the ref)");
        LEGEND.put("bump", "bumped (tokenless, counter bumped)");
        LEGEND.put("allow", "allowed (tokenless)");
        LEGEND.put("fenced", "FENCED");
        LEGEND.put("rejected", "REJECTED");
        LEGEND.put("cluster", "n overlapping marks");
    }

    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter DAY =
            DateTimeFormatter.ofPattern("yyyy-MM-dd").withZone(ZoneOffset.UTC);

    private static final String CSS = resource("timeline.css");
    private static final String SCRIPT = resource("timeline.js");

    /** The policy the page carries in its own {@code <meta>}: its inline style and script, nothing else. */
    private static final String POLICY = "default-src 'none'; style-src '" + sha256(CSS) + "'; script-src '"
            + sha256(SCRIPT) + "'; form-action 'self'; base-uri 'none'";

    private TimelinePage() {}

    /**
     * How to render.
     *
     * @param title the page's heading
     * @param since the window's start, or null for the first event's time
     * @param until the window's end, or null for the last event's time
     * @param commitUrl a link template with {@code {sha}} (and optionally {@code {repo}}), checked by {@link
     *     #commitUrl(String)}, or null for no links
     * @param generatedAt when the page is rendered
     * @param picker the server's resource picker and window form, or null for none
     * @param note a line to show above the timelines (e.g. that the newest events were cut), or null
     */
    public record Options(
            String title,
            Instant since,
            Instant until,
            String commitUrl,
            Instant generatedAt,
            Picker picker,
            String note) {}

    /**
     * The form of the served page: a GET to the page's own URL.
     *
     * @param resources the resources to pick from
     * @param selected the one shown, or null
     * @param since the window's start as typed, or null
     * @param until the window's end as typed, or null
     */
    public record Picker(List<String> resources, String selected, String since, String until) {}

    /**
     * The value of a {@code Content-Security-Policy} header for the page: its own policy, and no framing.
     */
    public static String contentSecurityPolicy() {
        return POLICY + "; frame-ancestors 'none'";
    }

    /**
     * Checks a {@code --commit-url} template: an http(s) URL containing {@code {sha}}.
     *
     * @return the template
     * @throws InvalidInputException otherwise
     */
    public static String commitUrl(String template) {
        if (template == null) {
            return null;
        }
        String lower = template.toLowerCase(Locale.ROOT);
        if (!(lower.startsWith("https://") || lower.startsWith("http://")) || !template.contains("{sha}")) {
            throw new InvalidInputException("--commit-url must be an http(s) URL with {sha} where the commit id goes"
                    + " (and optionally {repo}), e.g. https://git.example.com/{repo}/-/commit/{sha}; got '"
                    + template + "'");
        }
        return template;
    }

    /**
     * The page for {@code events} (any order, any number of resources); events outside the window of
     * {@code o} are left out.
     */
    public static String render(List<LedgerEvent> all, Options o) {
        List<LedgerEvent> events = all.stream()
                .filter(e -> (o.since() == null || !e.at().isBefore(o.since()))
                        && (o.until() == null || !e.at().isAfter(o.until())))
                .toList();
        List<LedgerEvent> sorted = TimelineModel.sorted(events);
        Instant first = o.since() != null
                ? o.since()
                : sorted.isEmpty() ? o.generatedAt() : sorted.get(0).at();
        Instant last = o.until() != null
                ? o.until()
                : sorted.isEmpty()
                        ? o.generatedAt()
                        : sorted.get(sorted.size() - 1).at();
        Axis axis = Axis.of(first, last, o.since() == null, o.until() == null);
        List<TimelineModel.Resource> resources = TimelineModel.build(sorted, axis.start, axis.end);

        StringBuilder h = new StringBuilder(4096 + events.size() * 400);
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
        h.append("<meta http-equiv=\"Content-Security-Policy\" content=\"")
                .append(esc(POLICY))
                .append("\">\n");
        h.append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        h.append("<title>").append(esc(o.title())).append("</title>\n");
        h.append("<style>").append(CSS).append("</style>\n</head><body>\n");
        h.append("<h1>").append(esc(o.title())).append("</h1>\n");
        if (o.picker() != null) {
            picker(h, o.picker());
        }
        h.append("<p class=\"window\" data-since=\"")
                .append(axis.start)
                .append("\" data-until=\"")
                .append(axis.end)
                .append("\">")
                .append(events.size())
                .append(events.size() == 1 ? " event" : " events")
                .append(" from ")
                .append(STAMP.format(axis.start))
                .append(" to ")
                .append(STAMP.format(axis.end))
                .append(" UTC, rendered ")
                .append(STAMP.format(o.generatedAt()))
                .append(" UTC. Hover a mark, bar or time for details (local time too).</p>\n");
        if (o.note() != null) {
            h.append("<p class=\"note\">").append(esc(o.note())).append("</p>\n");
        }
        legend(h);
        if (resources.isEmpty()) {
            h.append("<p class=\"empty\" data-empty>No events match.</p>\n");
        }
        for (TimelineModel.Resource r : resources) {
            timeline(h, r, axis);
        }
        table(h, sorted, resources, o.commitUrl());
        h.append("<div id=\"tip\" role=\"tooltip\" hidden></div>\n");
        h.append("<script>").append(SCRIPT).append("</script>\n</body></html>\n");
        return h.toString();
    }

    private static void picker(StringBuilder h, Picker p) {
        h.append("<form class=\"picker\" method=\"get\" data-picker>\n<label>Resource <select name=\"resource\">");
        for (String r : p.resources()) {
            h.append("<option value=\"").append(esc(r)).append('"');
            if (r.equals(p.selected())) {
                h.append(" selected");
            }
            h.append('>').append(esc(r)).append("</option>");
        }
        h.append("</select></label>\n<label>Since <input name=\"since\" placeholder=\"24h or 2026-12-01T14:00:00Z\"")
                .append(" value=\"")
                .append(esc(Objects.toString(p.since(), "")))
                .append("\"></label>\n<label>Until <input name=\"until\" placeholder=\"now\" value=\"")
                .append(esc(Objects.toString(p.until(), "")))
                .append("\"></label>\n<button type=\"submit\">Show</button>\n</form>\n");
    }

    private static void legend(StringBuilder h) {
        h.append("<ul class=\"legend\">");
        for (Map.Entry<String, String> e : LEGEND.entrySet()) {
            h.append("<li data-legend=\"").append(e.getKey()).append("\"><svg width=\"22\" height=\"16\">");
            switch (e.getKey()) {
                case "lease" -> h.append("<rect class=\"held\" x=\"1\" y=\"3\" width=\"20\" height=\"10\"/>");
                case "lapsed" -> h.append("<rect class=\"lapsed\" x=\"1\" y=\"3\" width=\"20\" height=\"10\"/>");
                case "cluster" -> h.append("<rect class=\"c k-fenced\" x=\"1\" y=\"1\" width=\"20\" height=\"14\""
                        + " rx=\"5\"/><text class=\"n\" x=\"11\" y=\"12\">n</text>");
                default -> shape(h, e.getKey(), 11, 8);
            }
            h.append("</svg>").append(esc(e.getValue())).append("</li>");
        }
        h.append("</ul>\n");
    }

    private static void timeline(StringBuilder h, TimelineModel.Resource r, Axis axis) {
        int height = AXIS + r.lanes().size() * LANE + 6;
        int width = GUTTER + PLOT + RIGHT;
        h.append("<section class=\"resource\" data-resource=\"")
                .append(esc(r.name()))
                .append("\">\n<h2>")
                .append(esc(r.name()))
                .append("</h2>\n<svg class=\"timeline\" viewBox=\"0 0 ")
                .append(width)
                .append(' ')
                .append(height)
                .append("\" width=\"")
                .append(width)
                .append("\" height=\"")
                .append(height)
                .append("\" role=\"img\" aria-label=\"timeline of ")
                .append(esc(r.name()))
                .append("\">\n");
        ticks(h, axis, height);
        List<String> labels = labels(r.lanes());
        for (int i = 0; i < r.lanes().size(); i++) {
            String lane = r.lanes().get(i);
            int top = AXIS + i * LANE;
            boolean holder = !lane.equals(TimelineModel.TOKENLESS) && !lane.equals(TimelineModel.UNPROVEN);
            h.append("<g class=\"lane\" data-lane=\"").append(esc(lane)).append('"');
            if (holder) {
                h.append(" data-holder=\"").append(esc(lane)).append('"');
            }
            h.append(" data-top=\"")
                    .append(top)
                    .append("\" data-height=\"")
                    .append(LANE)
                    .append("\">");
            h.append("<rect class=\"band")
                    .append(i % 2 == 0 ? "" : " odd")
                    .append("\" x=\"0\" y=\"")
                    .append(top);
            h.append("\" width=\"")
                    .append(width)
                    .append("\" height=\"")
                    .append(LANE)
                    .append("\"/>");
            h.append("<text class=\"label")
                    .append(holder ? "" : " special")
                    .append("\" x=\"")
                    .append(GUTTER - 8)
                    .append("\" y=\"")
                    .append(top + 16)
                    .append("\">")
                    .append(esc(labels.get(i)))
                    .append("<title>")
                    .append(esc(lane))
                    .append("</title></text>");
            for (TimelineModel.Bar b : r.bars()) {
                if (b.holder().equals(lane)) {
                    bar(h, b, axis, top);
                }
            }
            List<TimelineModel.Mark> laneMarks = new ArrayList<>();
            for (TimelineModel.Mark m : r.marks()) {
                if (m.lane().equals(lane)) {
                    laneMarks.add(m);
                }
            }
            marks(h, laneMarks, axis, top + LANE / 2.0);
            h.append("</g>\n");
        }
        h.append("</svg>\n</section>\n");
    }

    private static void ticks(StringBuilder h, Axis axis, int height) {
        h.append("<g class=\"axis\">");
        h.append("<text class=\"day\" x=\"4\" y=\"14\">")
                .append(DAY.format(axis.start))
                .append(" UTC</text>");
        for (Instant t : axis.ticks()) {
            double x = GUTTER + axis.x(t);
            h.append("<g class=\"tick\"><line x1=\"")
                    .append(fmt(x))
                    .append("\" x2=\"")
                    .append(fmt(x))
                    .append("\" y1=\"")
                    .append(AXIS - 8)
                    .append("\" y2=\"")
                    .append(height)
                    .append("\"/><text data-tip data-kind=\"tick\" data-t=\"")
                    .append(t)
                    .append("\" x=\"")
                    .append(fmt(x))
                    .append("\" y=\"")
                    .append(AXIS - 12)
                    .append("\">")
                    .append(axis.label(t))
                    .append("</text></g>");
        }
        h.append("</g>\n");
    }

    private static void bar(StringBuilder h, TimelineModel.Bar b, Axis axis, int top) {
        double x0 = GUTTER + axis.x(b.from());
        double x1 = GUTTER + axis.x(b.heldUntil());
        double x2 = GUTTER + axis.x(b.to());
        h.append("<g class=\"bar\" data-tip data-kind=\"lease\" data-holder=\"")
                .append(esc(b.holder()))
                .append("\" data-token=\"")
                .append(b.token())
                .append("\" data-t=\"")
                .append(b.from())
                .append("\" data-held-until=\"")
                .append(b.heldUntil())
                .append("\" data-t-end=\"")
                .append(b.to())
                .append("\" data-end=\"")
                .append(b.end().label())
                .append("\">");
        if (!b.lapsed() || b.heldUntil().isAfter(b.from())) {
            // A bar that starts lapsed (expired before the window, renewed in it) has no held part.
            rect(h, "held", "held", x0, top + 6, Math.max(1.5, x1 - x0), LANE - 12);
        }
        if (b.lapsed()) {
            rect(h, "lapsed", "lapsed", x1, top + 6, Math.max(1.5, x2 - x1), LANE - 12);
        }
        h.append("</g>");
    }

    /** Draws one lane's marks, merging those closer than {@link #CLUSTER_PX} into counted clusters. */
    private static void marks(StringBuilder h, List<TimelineModel.Mark> marks, Axis axis, double y) {
        int i = 0;
        while (i < marks.size()) {
            double x0 = GUTTER + axis.x(marks.get(i).event().at());
            int j = i + 1;
            while (j < marks.size() && GUTTER + axis.x(marks.get(j).event().at()) - x0 < CLUSTER_PX) {
                j++;
            }
            if (j - i == 1) {
                mark(h, marks.get(i), x0, y);
            } else {
                cluster(h, marks.subList(i, j), axis, y);
            }
            i = j;
        }
    }

    private static void mark(StringBuilder h, TimelineModel.Mark m, double x, double y) {
        LedgerEvent e = m.event();
        h.append("<g class=\"m\" data-tip data-kind=\"").append(m.kind()).append('"');
        attr(h, "data-lane", m.lane());
        attr(h, "data-holder", e.holder());
        h.append(" data-token=\"")
                .append(e.token())
                .append("\" data-t=\"")
                .append(e.at())
                .append('"');
        attr(h, "data-ref", e.ref());
        attr(h, "data-old", e.oldSha());
        attr(h, "data-new", e.newSha());
        attr(h, "data-pusher", e.pusher());
        attr(h, "data-reason", e.reason());
        attr(h, "data-detail", e.detail());
        h.append(" data-x=\"").append(fmt(x)).append("\">");
        shape(h, m.kind(), x, y);
        h.append("</g>");
    }

    private static void cluster(StringBuilder h, List<TimelineModel.Mark> marks, Axis axis, double y) {
        Map<String, Integer> counts = new java.util.TreeMap<>(
                java.util.Comparator.<String>comparingInt(SEVERITY::indexOf).thenComparing(k -> k));
        for (TimelineModel.Mark m : marks) {
            counts.merge(m.kind(), 1, Integer::sum);
        }
        String worst = counts.keySet().iterator().next();
        StringBuilder kinds = new StringBuilder();
        counts.forEach((k, n) -> kinds.append(kinds.length() == 0 ? "" : ",")
                .append(k)
                .append(':')
                .append(n));
        Set<String> holders = new LinkedHashSet<>();
        marks.forEach(m -> holders.add(Objects.toString(m.event().holder(), "")));
        Instant from = marks.get(0).event().at();
        Instant to = marks.get(marks.size() - 1).event().at();
        double x0 = GUTTER + axis.x(from);
        double x1 = GUTTER + axis.x(to);
        String n = Integer.toString(marks.size());
        double w = Math.max(x1 - x0 + 10, 8 + 6 * n.length());
        double cx = (x0 + x1) / 2;
        h.append("<g class=\"m\" data-tip data-kind=\"cluster\" data-count=\"")
                .append(n)
                .append('"');
        attr(h, "data-lane", marks.get(0).lane());
        attr(h, "data-holder", holders.size() == 1 ? marks.get(0).event().holder() : null);
        h.append(" data-kinds=\"")
                .append(kinds)
                .append("\" data-t=\"")
                .append(from)
                .append("\" data-t-end=\"")
                .append(to)
                .append("\" data-x=\"")
                .append(fmt(cx))
                .append("\">");
        h.append("<rect class=\"c k-")
                .append(worst)
                .append("\" x=\"")
                .append(fmt(cx - w / 2))
                .append("\" y=\"")
                .append(fmt(y - 7))
                .append("\" width=\"")
                .append(fmt(w))
                .append("\" height=\"14\" rx=\"5\"/><text class=\"n\" x=\"")
                .append(fmt(cx))
                .append("\" y=\"")
                .append(fmt(y + 4))
                .append("\">")
                .append(n)
                .append("</text></g>");
    }

    /** One mark's symbol centred on (x, y): shape and colour both say the kind. */
    private static void shape(StringBuilder h, String kind, double x, double y) {
        String c = "s k-" + kind;
        switch (kind) {
            case "bump" -> path(h, c, x, y - 6, "l6 6-6 6-6-6z");
            case "allow" -> rect(h, c, null, x - 5, y - 5, 10, 10);
            case "fenced" -> path(h, c, x - 6, y - 4, "l2-2 4 4 4-4 2 2-4 4 4 4-2 2-4-4-4 4-2-2 4-4z");
            case "rejected" -> path(h, c, x, y - 6, "l6 11h-12z");
            case "landed" -> circle(h, c, x, y, 3);
            default -> circle(h, c, x, y, 5);
        }
    }

    /** A path starting at (x, y) and going on with the relative commands {@code rest}. */
    private static void path(StringBuilder h, String cls, double x, double y, String rest) {
        h.append("<path class=\"")
                .append(cls)
                .append("\" d=\"M")
                .append(fmt(x))
                .append(' ')
                .append(fmt(y))
                .append(rest)
                .append("\"/>");
    }

    private static void circle(StringBuilder h, String cls, double x, double y, int r) {
        h.append("<circle class=\"")
                .append(cls)
                .append("\" cx=\"")
                .append(fmt(x))
                .append("\" cy=\"")
                .append(fmt(y))
                .append("\" r=\"")
                .append(r)
                .append("\"/>");
    }

    private static void rect(StringBuilder h, String cls, String part, double x, double y, double w, double height) {
        h.append("<rect class=\"").append(cls).append('"');
        if (part != null) {
            h.append(" data-part=\"").append(part).append('"');
        }
        h.append(" x=\"")
                .append(fmt(x))
                .append("\" y=\"")
                .append(fmt(y))
                .append("\" width=\"")
                .append(fmt(w))
                .append("\" height=\"")
                .append(fmt(height))
                .append("\"/>");
    }

    private static void table(
            StringBuilder h, List<LedgerEvent> events, List<TimelineModel.Resource> resources, String commitUrl) {
        Set<String> kinds = new LinkedHashSet<>();
        Set<String> lanes = new LinkedHashSet<>();
        Map<String, String> grantedTo = TimelineModel.grantedTo(events);
        for (LedgerEvent e : events) {
            kinds.add(rowKind(e));
            lanes.add(rowLane(e, grantedTo));
        }
        h.append("<h2>Events</h2>\n<div class=\"filters\"><label>Type <select id=\"f-kind\" data-filter=\"kind\">")
                .append("<option value=\"\">all</option>");
        for (String k : SEVERITY_AND_LEASE) {
            if (kinds.contains(k)) {
                h.append("<option value=\"").append(k).append("\">").append(k).append("</option>");
            }
        }
        h.append("</select></label> <label>Holder <select id=\"f-lane\" data-filter=\"lane\">")
                .append("<option value=\"\">all</option>");
        for (String l : lanes) {
            h.append("<option value=\"")
                    .append(esc(l))
                    .append("\">")
                    .append(esc(l))
                    .append("</option>");
        }
        h.append("</select></label> <span id=\"shown\" data-shown>")
                .append(events.size())
                .append(" of ")
                .append(events.size())
                .append(" events</span></div>\n");
        h.append("<div class=\"scroll\"><table id=\"events\"><thead><tr><th>time (UTC)</th><th>event</th>")
                .append(resources.size() > 1 ? "<th>resource</th>" : "")
                .append("<th>holder</th><th>pusher</th><th>token</th><th>old → new</th><th>reason</th></tr></thead>")
                .append("<tbody>\n");
        for (LedgerEvent e : events) {
            String kind = rowKind(e);
            h.append("<tr data-kind=\"").append(kind).append('"');
            attr(h, "data-lane", rowLane(e, grantedTo));
            h.append(" data-token=\"")
                    .append(e.token())
                    .append("\" data-t=\"")
                    .append(e.at())
                    .append("\">");
            h.append("<td data-t=\"")
                    .append(e.at())
                    .append("\">")
                    .append(STAMP.format(e.at()))
                    .append("</td>");
            h.append("<td class=\"k-")
                    .append(kind)
                    .append("\">")
                    .append(kindLabel(kind))
                    .append("</td>");
            if (resources.size() > 1) {
                h.append("<td>").append(esc(e.resource())).append("</td>");
            }
            h.append("<td>").append(esc(dash(e.holder()))).append("</td>");
            h.append("<td>").append(esc(dash(e.pusher()))).append("</td>");
            h.append("<td>")
                    .append(e.token() == 0 ? "-" : Long.toString(e.token()))
                    .append("</td><td>");
            if (e.oldSha() == null && e.newSha() == null) {
                h.append('-');
            } else {
                sha(h, e.oldSha(), e.repo(), commitUrl);
                h.append(" → ");
                sha(h, e.newSha(), e.repo(), commitUrl);
            }
            h.append("</td><td>").append(esc(dash(e.reason())));
            if (e.detail() != null) {
                h.append(" <span class=\"detail\">").append(esc(e.detail())).append("</span>");
            }
            h.append("</td></tr>\n");
        }
        h.append("</tbody></table></div>\n");
    }

    private static final List<String> SEVERITY_AND_LEASE = List.of(
            "grant",
            "release",
            "expire",
            "renew",
            "accept",
            "landed",
            "bump",
            "allow",
            "fenced",
            "rejected",
            "retention");

    private static String rowKind(LedgerEvent e) {
        return TimelineModel.kind(e);
    }

    /** A lease event's lane is its holder; a push's is the one it is drawn on. */
    private static String rowLane(LedgerEvent e, Map<String, String> grantedTo) {
        return TimelineModel.isPush(e.type()) ? TimelineModel.lane(e, grantedTo) : Objects.toString(e.holder(), "");
    }

    private static String kindLabel(String kind) {
        return switch (kind) {
            case "fenced" -> "FENCED";
            case "rejected" -> "REJECTED";
            case "accept" -> "accepted";
            case "bump" -> "bumped";
            case "allow" -> "allowed";
            default -> kind;
        };
    }

    private static void sha(StringBuilder h, String sha, String repo, String commitUrl) {
        String shown =
                sha == null ? "?" : ObjectIds.isZero(sha) ? "0000000" : sha.substring(0, Math.min(7, sha.length()));
        if (commitUrl == null || !ObjectIds.isValid(sha) || ObjectIds.isZero(sha)) {
            h.append("<code>").append(esc(shown)).append("</code>");
            return;
        }
        String url = commitUrl
                .replace("{sha}", sha)
                .replace("{repo}", URLEncoder.encode(Objects.toString(repo, ""), StandardCharsets.UTF_8));
        h.append("<a data-commit=\"")
                .append(sha)
                .append("\" href=\"")
                .append(esc(url))
                .append("\" rel=\"noreferrer noopener\"><code>")
                .append(shown)
                .append("</code></a>");
    }

    private static void attr(StringBuilder h, String name, String value) {
        if (value != null) {
            h.append(' ').append(name).append("=\"").append(esc(value)).append('"');
        }
    }

    /** Escapes text for HTML text and double- or single-quoted attribute values. */
    static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String rep =
                    switch (c) {
                        case '&' -> "&amp;";
                        case '<' -> "&lt;";
                        case '>' -> "&gt;";
                        case '"' -> "&quot;";
                        case '\'' -> "&#39;";
                        default -> null;
                    };
            if (rep == null && c < 0x20 && c != '\n' && c != '\t') {
                rep = "\uFFFD";
            }
            if (rep != null && out == null) {
                out = new StringBuilder(s.length() + 16).append(s, 0, i);
            }
            if (out != null) {
                if (rep != null) {
                    out.append(rep);
                } else {
                    out.append(c);
                }
            }
        }
        return out == null ? s : out.toString();
    }

    /**
     * The lane labels, in the order of {@code lanes}: each name as it is when it fits the gutter ({@value
     * #LABEL_MAX} characters), else its start and its end around an ellipsis; and when two labels would
     * still read the same, each of them followed by a number, so that no two lanes look alike. The full
     * name is the label's tooltip.
     */
    static List<String> labels(List<String> lanes) {
        Map<String, Integer> seen = new HashMap<>();
        for (String lane : lanes) {
            seen.merge(clipMiddle(lane, LABEL_MAX), 1, Integer::sum);
        }
        Set<String> used = new HashSet<>();
        List<String> plain = new ArrayList<>();
        for (String lane : lanes) {
            String label = clipMiddle(lane, LABEL_MAX);
            plain.add(label);
            if (seen.get(label) == 1) {
                used.add(label);
            }
        }
        List<String> out = new ArrayList<>();
        int n = 0;
        for (int i = 0; i < lanes.size(); i++) {
            String label = plain.get(i);
            if (seen.get(label) > 1) {
                // Numbered in lane order; a number another lane's label already reads as is skipped.
                String numbered;
                do {
                    String suffix = " #" + ++n;
                    numbered = clipMiddle(lanes.get(i), LABEL_MAX - suffix.length()) + suffix;
                } while (!used.add(numbered));
                label = numbered;
            }
            out.add(label);
        }
        return out;
    }

    /**
     * {@code s} when it has at most {@code max} characters (code points), else its start and its end
     * around an ellipsis: the end of a name (a region, a number) tells its siblings apart as often as its
     * start.
     */
    static String clipMiddle(String s, int max) {
        int[] cps = s.codePoints().toArray();
        if (cps.length <= max) {
            return s;
        }
        int head = (max - 1) / 2;
        int tail = max - 1 - head;
        return new String(cps, 0, head) + "…" + new String(cps, cps.length - tail, tail);
    }

    private static String dash(String s) {
        return s == null || s.isEmpty() ? "-" : s;
    }

    private static String fmt(double v) {
        long tenths = Math.round(v * 10);
        return tenths % 10 == 0 ? Long.toString(tenths / 10) : Double.toString(tenths / 10.0);
    }

    /** The time axis: a window and its mapping onto the plot's 1000 units. */
    static final class Axis {
        private static final List<Duration> STEPS = List.of(
                Duration.ofSeconds(1),
                Duration.ofSeconds(2),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(15),
                Duration.ofSeconds(30),
                Duration.ofMinutes(1),
                Duration.ofMinutes(2),
                Duration.ofMinutes(5),
                Duration.ofMinutes(10),
                Duration.ofMinutes(15),
                Duration.ofMinutes(30),
                Duration.ofHours(1),
                Duration.ofHours(2),
                Duration.ofHours(3),
                Duration.ofHours(6),
                Duration.ofHours(12),
                Duration.ofDays(1),
                Duration.ofDays(2),
                Duration.ofDays(7),
                Duration.ofDays(14),
                Duration.ofDays(30),
                Duration.ofDays(90),
                Duration.ofDays(365));
        private static final DateTimeFormatter SECONDS =
                DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);
        private static final DateTimeFormatter MINUTES =
                DateTimeFormatter.ofPattern("HH:mm").withZone(ZoneOffset.UTC);
        private static final DateTimeFormatter DAYS =
                DateTimeFormatter.ofPattern("MM-dd").withZone(ZoneOffset.UTC);

        final Instant start;
        final Instant end;
        private final double spanMillis;
        private final Duration step;

        private Axis(Instant start, Instant end) {
            this.start = start;
            this.end = end;
            this.spanMillis = Math.max(1, Duration.between(start, end).toMillis());
            Duration pick = STEPS.get(STEPS.size() - 1);
            for (Duration d : STEPS) {
                if (spanMillis / d.toMillis() <= 10) {
                    pick = d;
                    break;
                }
            }
            this.step = pick;
        }

        /** A window from {@code first} to {@code last}, padded on the sides that were not given. */
        static Axis of(Instant first, Instant last, boolean padStart, boolean padEnd) {
            if (last.isBefore(first)) {
                last = first;
            }
            long span = Math.max(Duration.between(first, last).toMillis(), 2000);
            long pad = Math.max(span / 40, 500);
            Instant s = padStart ? first.minusMillis(pad) : first;
            Instant e = padEnd ? last.plusMillis(pad) : last;
            if (!e.isAfter(s)) {
                e = s.plusSeconds(1);
            }
            return new Axis(s.truncatedTo(ChronoUnit.MILLIS), e.truncatedTo(ChronoUnit.MILLIS));
        }

        /** {@code t}'s position in the plot: 0 at the start, 1000 at the end, clamped. */
        double x(Instant t) {
            double f = Duration.between(start, t).toMillis() / spanMillis;
            return PLOT * Math.max(0, Math.min(1, f));
        }

        List<Instant> ticks() {
            long s = step.toMillis();
            long first = Math.floorDiv(start.toEpochMilli() + s - 1, s) * s;
            List<Instant> out = new ArrayList<>();
            for (long t = first; t <= end.toEpochMilli(); t += s) {
                out.add(Instant.ofEpochMilli(t));
            }
            return out;
        }

        String label(Instant t) {
            if (step.compareTo(Duration.ofMinutes(1)) < 0) {
                return SECONDS.format(t);
            }
            return step.compareTo(Duration.ofDays(1)) < 0 ? MINUTES.format(t) : DAYS.format(t);
        }
    }

    private static String resource(String name) {
        try (InputStream in = TimelinePage.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name + " next to " + TimelinePage.class);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha256(String text) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return "sha256-" + Base64.getEncoder().encodeToString(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
