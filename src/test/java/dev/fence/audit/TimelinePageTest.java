package dev.fence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LedgerEvent;
import dev.fence.core.Resources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The incident page as markup: lanes, bars and marks where the ledger puts them, and nothing it can inject. */
class TimelinePageTest {
    static final Instant T0 = Instant.parse("2026-11-29T14:26:10Z");
    static final String RES = Resources.forRef("billing", "refs/heads/feat/x");
    static final String OLD = "1".repeat(40);
    static final String MID = "2".repeat(40);
    static final String NEW = "3".repeat(40);

    static Instant at(int seconds) {
        return T0.plusSeconds(seconds);
    }

    static LedgerEvent lease(int s, EventType type, String holder, long token) {
        return LedgerEvent.lease(at(s), type, RES, holder, token);
    }

    static LedgerEvent push(
            int s, EventType type, String holder, String pusher, long token, String old, String neu, String reason) {
        return new LedgerEvent(
                0, at(s), type, RES, "billing", "refs/heads/feat/x", holder, pusher, token, old, neu, reason, null);
    }

    /** The incident: A's lease lapses, B takes over and pushes, A's stale and tokenless pushes bounce. */
    static List<LedgerEvent> incident() {
        return List.of(
                lease(0, EventType.GRANT, "agent-A", 5),
                push(30, EventType.ACCEPT, "agent-A", "agent-A", 5, OLD, MID, "accepted"),
                lease(60, EventType.EXPIRE, "agent-A", 5),
                lease(300, EventType.GRANT, "agent-B", 6),
                push(340, EventType.ACCEPT, "agent-B", "agent-B", 6, MID, NEW, "accepted"),
                lease(380, EventType.RELEASE, "agent-B", 6),
                push(840, EventType.REJECT, "agent-A", "agent-A", 5, NEW, OLD, "stale-token"),
                push(845, EventType.REJECT, null, "agent-A", 6, NEW, OLD, "bad-proof"),
                push(850, EventType.REJECT, null, "agent-A", 0, NEW, OLD, "token-required"),
                push(900, EventType.BUMP, null, "dana", 7, NEW, MID, "bumped"),
                push(960, EventType.REJECT, null, "ci", 0, NEW, OLD, "store-down"));
    }

    static String page(List<LedgerEvent> events) {
        return page(events, null);
    }

    static String page(List<LedgerEvent> events, String commitUrl) {
        return TimelinePage.render(
                events, new TimelinePage.Options("incident", null, null, commitUrl, at(1000), null, null));
    }

    /** Each lane's markup, by its data-lane value (lanes are written one per line). */
    static java.util.Map<String, String> lanes(String html) {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        Matcher m = Pattern.compile("<g class=\"lane\" data-lane=\"([^\"]*)\"[^\n]*")
                .matcher(html);
        while (m.find()) {
            out.put(m.group(1), m.group());
        }
        return out;
    }

    /** The opening tags of elements with {@code data-kind="kind"} in {@code markup}. */
    static List<String> elements(String markup, String kind) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("<g [^>]*data-kind=\"" + kind + "\"[^>]*>").matcher(markup);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    static String attr(String tag, String name) {
        Matcher m = Pattern.compile(" " + name + "=\"([^\"]*)\"").matcher(tag);
        return m.find() ? m.group(1) : null;
    }

    @Test
    void oneLanePerHolderThenTheUnprovenAndTokenlessLanes() {
        assertEquals(
                List.of("agent-A", "agent-B", "(unproven token)", "(tokenless)"),
                List.copyOf(lanes(page(incident())).keySet()));
    }

    @Test
    void aLapsedLeaseIsHeldUntilItsExpiryAndLapsedUntilItsSuccessor() {
        var lanes = lanes(page(incident()));
        List<String> bars = elements(lanes.get("agent-A"), "lease");
        assertEquals(1, bars.size());
        String a = bars.get(0);
        assertEquals("5", attr(a, "data-token"));
        assertEquals(at(0).toString(), attr(a, "data-t"));
        assertEquals(at(60).toString(), attr(a, "data-held-until"));
        assertEquals(at(300).toString(), attr(a, "data-t-end"), "lapsed until agent-B's grant superseded it");
        assertEquals("expired", attr(a, "data-end"));
        assertTrue(lanes.get("agent-A").contains("data-part=\"lapsed\""));

        String b = elements(lanes.get("agent-B"), "lease").get(0);
        assertEquals("released", attr(b, "data-end"));
        assertEquals(at(380).toString(), attr(b, "data-held-until"));
        assertEquals(attr(b, "data-held-until"), attr(b, "data-t-end"));
        assertFalse(lanes.get("agent-B").contains("data-part=\"lapsed\""), "a released lease never lapsed");
    }

    @Test
    void aLeaseRenewedAfterItsLapseIsDrawnLapsedUntilTheRenewalAndHeldAfterIt() {
        List<LedgerEvent> events = List.of(
                lease(0, EventType.GRANT, "agent-A", 5),
                lease(60, EventType.EXPIRE, "agent-A", 5),
                lease(90, EventType.RENEW, "agent-A", 5),
                push(120, EventType.ACCEPT, "agent-A", "agent-A", 5, OLD, MID, "accepted"));
        String html = page(events);
        List<String> bars = elements(lanes(html).get("agent-A"), "lease");
        assertEquals(2, bars.size(), bars.toString());
        assertEquals(at(60).toString(), attr(bars.get(0), "data-held-until"));
        assertEquals(at(90).toString(), attr(bars.get(0), "data-t-end"), "lapsed until the renewal");
        assertEquals("renewed", attr(bars.get(0), "data-end"));
        assertEquals(at(90).toString(), attr(bars.get(1), "data-t"), "held again from the renewal");
        assertEquals("open", attr(bars.get(1), "data-end"));
        assertTrue(html.contains("<option value=\"renew\">renew</option>"), "the type filter offers it");
    }

    @Test
    void aBumpSupersedesTheLiveLeaseAndAnUnendedLeaseRunsToTheWindowsEnd() {
        List<LedgerEvent> events = List.of(
                lease(0, EventType.GRANT, "agent-A", 5),
                push(20, EventType.BUMP, null, "dana", 6, OLD, MID, "bumped"),
                lease(40, EventType.GRANT, "agent-B", 7));
        var lanes = lanes(page(events));
        String a = elements(lanes.get("agent-A"), "lease").get(0);
        assertEquals("superseded", attr(a, "data-end"));
        assertEquals(at(20).toString(), attr(a, "data-held-until"));
        String b = elements(lanes.get("agent-B"), "lease").get(0);
        assertEquals("open", attr(b, "data-end"));
        assertTrue(Instant.parse(attr(b, "data-t-end")).isAfter(at(40)), "runs to the padded end of the window");
    }

    @Test
    void everyPushIsAMarkOnTheLaneOfTheHolderItCameUnderWithTheTooltipFields() {
        var lanes = lanes(page(incident()));
        List<String> a = new ArrayList<>(elements(lanes.get("agent-A"), "accept"));
        assertEquals(1, a.size());
        assertEquals(OLD, attr(a.get(0), "data-old"));
        assertEquals(MID, attr(a.get(0), "data-new"));
        assertEquals("agent-A", attr(a.get(0), "data-pusher"));
        String stale = elements(lanes.get("agent-A"), "fenced").get(0);
        assertEquals("stale-token", attr(stale, "data-reason"));
        assertEquals("5", attr(stale, "data-token"));
        assertEquals(at(840).toString(), attr(stale, "data-t"));

        String forged = elements(lanes.get("(unproven token)"), "fenced").get(0);
        assertEquals("bad-proof", attr(forged, "data-reason"), "a token without its proof names no holder");
        assertEquals(null, attr(forged, "data-holder"));

        String tokenless = lanes.get("(tokenless)");
        assertEquals(1, elements(tokenless, "fenced").size(), "token-required is FENCED");
        assertEquals(1, elements(tokenless, "bump").size());
        assertEquals(
                "store-down", attr(elements(tokenless, "rejected").get(0), "data-reason"), "store-down is REJECTED");
    }

    @Test
    void marksSitAtTheirTimeInsideTheLeaseTheyCameUnder() {
        var lanes = lanes(page(incident()));
        String a = lanes.get("agent-A");
        double accept = Double.parseDouble(attr(elements(a, "accept").get(0), "data-x"));
        Matcher held = Pattern.compile("data-part=\"held\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"")
                .matcher(a);
        assertTrue(held.find());
        double x = Double.parseDouble(held.group(1));
        double w = Double.parseDouble(held.group(2));
        assertTrue(accept > x && accept < x + w, accept + " within [" + x + ", " + (x + w) + "]");
        double fenced = Double.parseDouble(attr(elements(a, "fenced").get(0), "data-x"));
        assertTrue(fenced > accept, "later is further right");
    }

    @Test
    void ledgerTextIsEscapedEverywhereAndOnlyThePagesOwnScriptRuns() {
        String evil = "<script>alert(1)</script>\"' onmouseover=\"x";
        List<LedgerEvent> events = List.of(
                LedgerEvent.lease(at(0), EventType.GRANT, "res<img src=x onerror=alert(2)>", evil, 3),
                new LedgerEvent(
                        0,
                        at(5),
                        EventType.REJECT,
                        "res<img src=x onerror=alert(2)>",
                        null,
                        "refs/heads/<b>",
                        evil,
                        "</title><script>alert(3)</script>",
                        3,
                        null,
                        null,
                        "stale-token\"><script>alert(4)</script>",
                        "<iframe src=//evil.example>"));
        String html = page(events);
        assertEquals(1, count(html, "<script"), "only the page's own script element");
        assertFalse(html.contains("<img"), html);
        assertFalse(html.contains("<iframe"), html);
        assertFalse(html.contains("<b>"), html);
        assertFalse(html.contains("onmouseover=\"x"), html);
        assertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39; onmouseover=&quot;x"), html);
        assertTrue(lanes(html).containsKey(TimelinePage.esc(evil)), "the lane is named as the ledger names it");
    }

    @Test
    void theContentSecurityPolicyAllowsOnlyThePagesOwnStyleAndScriptAndNoConnections() {
        String html = page(incident());
        String policy = TimelinePage.contentSecurityPolicy();
        assertTrue(policy.startsWith("default-src 'none'; style-src 'sha256-"), policy);
        assertTrue(policy.contains("frame-ancestors 'none'"));
        assertFalse(policy.contains("unsafe"), policy);
        assertTrue(html.contains("http-equiv=\"Content-Security-Policy\""));
        assertFalse(Pattern.compile("(src|href)=\"(https?:)?//").matcher(html).find(), "nothing to fetch");
        assertFalse(html.contains(" style=\""), "no style attributes: the policy would refuse them");
    }

    @Test
    void commitLinksFollowTheTemplateOnlyForRealObjectIds() {
        List<LedgerEvent> events = new ArrayList<>(incident());
        events.add(push(990, EventType.REJECT, null, "x", 0, NEW, "javascript:alert(1)", "malformed"));
        String html = page(events, "https://git.example.com/{repo}/-/commit/{sha}");
        assertTrue(html.contains("href=\"https://git.example.com/billing/-/commit/" + MID + "\""), html);
        assertFalse(html.contains("href=\"javascript"), "not an object id: shown, not linked");
        assertFalse(html.contains("commit/" + "0".repeat(40)), "no link for the zero id");
        assertFalse(page(incident()).contains("data-commit"), "no template, no links");
        assertThrows(InvalidInputException.class, () -> TimelinePage.commitUrl("javascript:alert('{sha}')"));
        assertThrows(InvalidInputException.class, () -> TimelinePage.commitUrl("https://git.example.com/commit/"));
    }

    @Test
    void theTableHasEveryEventWithTheAttributesTheFiltersUse() {
        String html = page(incident());
        String body = html.substring(html.indexOf("<tbody>"));
        assertEquals(incident().size(), count(body, "<tr "));
        assertEquals(
                2,
                count(body, "<tr data-kind=\"fenced\" data-lane=\"agent-A\"")
                        + count(body, "<tr data-kind=\"fenced\" data-lane=\"(tokenless)\""));
        assertTrue(html.contains("<option value=\"fenced\">"));
        assertTrue(html.contains("<option value=\"(unproven token)\">"));
    }

    @Test
    void theWindowLeavesOutEventsOutsideIt() {
        String html = TimelinePage.render(
                incident(), new TimelinePage.Options("w", at(200), at(400), null, at(1000), null, null));
        String body = html.substring(html.indexOf("<tbody>"));
        assertEquals(3, count(body, "<tr "), "agent-B's grant, push and release");
        assertEquals(List.of("agent-B"), List.copyOf(lanes(html).keySet()));
    }

    @Test
    void tenThousandEventsAreAggregatedIntoCountedClusters() {
        List<LedgerEvent> events = new ArrayList<>();
        int pushes = 0;
        for (int i = 0; i < 10_000; i++) {
            String holder = "agent-" + (i % 8);
            if (i % 50 == 0) {
                events.add(lease(i, EventType.GRANT, holder, i + 1));
            } else {
                EventType t = i % 7 == 0 ? EventType.REJECT : EventType.ACCEPT;
                events.add(push(i, t, holder, holder, i, OLD, NEW, t == EventType.REJECT ? "stale-token" : "accepted"));
                pushes++;
            }
        }
        long start = System.nanoTime();
        String html = page(events);
        long millis = (System.nanoTime() - start) / 1_000_000;
        String svg = html.substring(0, html.indexOf("<tbody>"));
        int drawn = 0;
        int counted = 0;
        Matcher m = Pattern.compile("<g class=\"m\"[^>]*>").matcher(svg);
        while (m.find()) {
            drawn++;
            String c = attr(m.group(), "data-count");
            counted += c == null ? 1 : Integer.parseInt(c);
        }
        assertEquals(pushes, counted, "every push is drawn, alone or counted in a cluster");
        assertTrue(
                drawn < 8 * 1000 / TimelinePage.CLUSTER_PX + 8,
                drawn + " marks: at most one per cluster width per lane");
        assertTrue(svg.contains("data-kinds=\"fenced:"), "a cluster's tooltip breaks it down, fenced first");
        assertTrue(html.length() < 6_000_000, html.length() + " bytes");
        assertTrue(millis < 5_000, millis + " ms");
    }

    static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /** Each lane's label and its tooltip (the full name), in lane order. */
    static List<List<String>> labels(String html) {
        List<List<String>> out = new ArrayList<>();
        Matcher m = Pattern.compile("<text class=\"label[^\"]*\"[^>]*>([^<]*)<title>([^<]*)</title></text>")
                .matcher(html);
        while (m.find()) {
            out.add(List.of(m.group(1), m.group(2)));
        }
        return out;
    }

    /**
     * Long holder names keep their end, where siblings differ (a region, a number), and two lanes whose
     * labels would still read the same are numbered: no two lanes of a timeline look alike.
     */
    @Test
    void longLaneNamesKeepTheirEndAndNoTwoLanesReadTheSame() {
        String eu = "deploy-bot-production-eu";
        String ex = "deploy-bot-production-eX";
        String west = "deploy-bot-aaaa-production-eu-west-1";
        String westToo = "deploy-bot-bbbb-production-eu-west-1";
        List<LedgerEvent> events = new ArrayList<>();
        String[] holders = {eu, ex, west, westToo, "agent-A"};
        for (int i = 0; i < holders.length; i++) {
            events.add(lease(10 * i, EventType.GRANT, holders[i], i + 1));
        }
        List<List<String>> labels = labels(page(events));
        assertEquals(
                List.of(
                        List.of("deploy-bot…oduction-eu", eu),
                        List.of("deploy-bot…oduction-eX", ex),
                        List.of("deploy-bo…eu-west-1 #1", west),
                        List.of("deploy-bo…eu-west-1 #2", westToo),
                        List.of("agent-A", "agent-A")),
                labels);
        for (List<String> l : labels) {
            assertTrue(l.get(0).codePointCount(0, l.get(0).length()) <= TimelinePage.LABEL_MAX, l.get(0));
        }
        // A number is never one another lane's label already reads as.
        List<String> taken = TimelinePage.labels(List.of("deploy-bo…eu-west-1 #1", west, westToo));
        assertEquals(List.of("deploy-bo…eu-west-1 #1", "deploy-bo…eu-west-1 #2", "deploy-bo…eu-west-1 #3"), taken);
        // Clipped by characters, never inside one.
        assertEquals("😀😀😀😀😀😀😀😀😀😀…😀😀😀😀😀😀😀😀😀😀😀", TimelinePage.clipMiddle("😀".repeat(30), 22));
    }
}
