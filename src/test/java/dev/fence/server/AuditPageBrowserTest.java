package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fence.audit.TimelinePage;
import dev.fence.core.EventType;
import dev.fence.core.FencedMessage;
import dev.fence.core.LedgerEvent;
import dev.fence.core.Reason;
import dev.fence.testing.Chromium;
import dev.fence.testing.FenceCli;
import dev.fence.testing.LegacyGrants;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The incident page in a real headless Chromium: the demo's page from a file and {@code /audit} from a
 * running server. Lanes, bars and marks are checked against the ledger by their attributes and their
 * boxes, tooltips by hovering, filters by using them; the page must log no error and ask nothing of any
 * origin but its own.
 */
@ProcessTest
class AuditPageBrowserTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;

    static Chromium browser;

    @BeforeAll
    static void launch() {
        var binary = Chromium.binary();
        if (binary.isEmpty()) {
            String why = "no Chromium on this machine (apt-get install chromium, as .ci/run does, or set $CHROMIUM):"
                    + " the incident page's browser tests are SKIPPED";
            System.err.println(why);
            Assumptions.abort(why);
        }
        browser = Chromium.launch(binary.get());
    }

    @AfterAll
    static void close() {
        if (browser != null) {
            browser.close();
        }
    }

    static FenceCli.Run fence(String... args) {
        Map<String, String> env =
                Map.of("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"), "HOME", tmp.toString());
        return new FenceCli(env, Clock.systemUTC()).run(tmp, args);
    }

    /** The lane the ledger puts a push on: its holder; tokenless, or an unproven token, on lanes of their own. */
    /**
     * The lane README describes for a push event: its holder; tokenless pushes and the landings of bumped or
     * allowed ones on (tokenless); an accepted push's landing recorded without a holder on the holder its
     * token was granted to in {@code ledger}; else (unproven token).
     */
    static String expectedLane(JsonNode e, Iterable<JsonNode> ledger) {
        if (!e.path("holder").isNull() && !e.path("holder").asText().isEmpty()) {
            return e.get("holder").asText();
        }
        String type = e.get("type").asText();
        String reason = e.path("reason").asText("");
        if (type.equals("bump")
                || type.equals("allow")
                || e.get("token").asLong() == 0
                || reason.equals("bumped")
                || reason.equals("allowed")) {
            return "(tokenless)";
        }
        if ((type.equals("landed") || type.equals("unlanded")) && reason.equals("accepted")) {
            for (JsonNode g : ledger) {
                if (g.get("type").asText().equals("grant")
                        && g.get("resource").asText().equals(e.get("resource").asText())
                        && g.get("token").asLong() == e.get("token").asLong()) {
                    return g.get("holder").asText();
                }
            }
        }
        return "(unproven token)";
    }

    static String expectedKind(JsonNode e) {
        if (!e.get("type").asText().equals("reject")) {
            return e.get("type").asText();
        }
        return FencedMessage.isFencing(Reason.fromCode(e.get("reason").asText())) ? "fenced" : "rejected";
    }

    static boolean isPush(JsonNode e) {
        return List.of("accept", "bump", "allow", "reject", "landed")
                .contains(e.get("type").asText());
    }

    /** Every mark, bar and lane band the page drew, with its attributes and its box on screen. */
    static final String GEOMETRY =
            """
            (() => {
              const box = el => { const r = el.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
              const out = {marks: [], bars: [], lanes: []};
              for (const s of document.querySelectorAll('section[data-resource]')) {
                for (const g of s.querySelectorAll('g.lane')) {
                  out.lanes.push({resource: s.dataset.resource, lane: g.dataset.lane, box: box(g.querySelector('rect.band'))});
                  for (const m of g.querySelectorAll('g.m')) {
                    out.marks.push(Object.assign({resource: s.dataset.resource, box: box(m), laneOf: g.dataset.lane}, m.dataset));
                  }
                  for (const b of g.querySelectorAll('g.bar')) {
                    const held = b.querySelector('[data-part=held]'), lapsed = b.querySelector('[data-part=lapsed]');
                    out.bars.push(Object.assign({resource: s.dataset.resource, laneOf: g.dataset.lane, held: box(held),
                      lapsed: lapsed ? box(lapsed) : null}, b.dataset));
                  }
                }
              }
              return out;
            })()""";

    @Test
    void theDemosPageDrawsTheLedgerAndWorksInABrowser() throws Exception {
        Path page = tmp.resolve("incident.html");
        String store = "sqlite:" + tmp.resolve("demo.db");
        FenceCli.Run demo =
                fence("demo", "--store", store, "--ttl", "2s", "--progress", "never", "--html", page.toString());
        assertEquals(0, demo.exit(), demo.out() + demo.err());
        FenceCli.Run audit = fence("audit", "--store", store, "--json", "--limit", "0");
        assertEquals(0, audit.exit(), audit.err());
        List<JsonNode> ledger = new ArrayList<>();
        for (String line : audit.out().split("\n")) {
            if (!line.isBlank()) {
                ledger.add(JSON.readTree(line));
            }
        }

        Chromium.Tab tab = browser.open(null, null);
        tab.viewport(1280, 900);
        tab.navigate(page.toUri().toString());
        JsonNode g = tab.eval(GEOMETRY);

        // Every push of the ledger is a mark on its lane, alone or counted in a cluster that spans its time.
        int pushes = 0;
        for (JsonNode e : ledger) {
            if (!isPush(e)) {
                continue;
            }
            pushes++;
            Instant at = Instant.parse(e.get("at").asText());
            String lane = expectedLane(e, ledger);
            boolean found = false;
            for (JsonNode m : g.get("marks")) {
                if (!m.get("resource").asText().equals(e.get("resource").asText())
                        || !m.get("laneOf").asText().equals(lane)) {
                    continue;
                }
                Instant t = Instant.parse(m.get("t").asText());
                if (m.get("kind").asText().equals("cluster")) {
                    Instant end = Instant.parse(m.get("tEnd").asText());
                    found |= !at.isBefore(t)
                            && !at.isAfter(end)
                            && m.get("kinds").asText().contains(expectedKind(e));
                } else {
                    found |= t.equals(at)
                            && m.get("kind").asText().equals(expectedKind(e))
                            && m.get("token").asLong() == e.get("token").asLong();
                }
            }
            assertTrue(found, "a " + expectedKind(e) + " mark on lane " + lane + " for " + e);
        }
        int drawn = 0;
        for (JsonNode m : g.get("marks")) {
            drawn += m.has("count") ? m.get("count").asInt() : 1;
        }
        assertEquals(pushes, drawn, "no mark the ledger does not have");

        // Every grant is a bar on its holder's lane; an expired lease is held to its expiry, then lapsed.
        for (JsonNode e : ledger) {
            String type = e.get("type").asText();
            if (!type.equals("grant") && !type.equals("expire")) {
                continue;
            }
            JsonNode bar = null;
            for (JsonNode b : g.get("bars")) {
                if (b.get("resource").asText().equals(e.get("resource").asText())
                        && b.get("token").asLong() == e.get("token").asLong()) {
                    bar = b;
                }
            }
            assertTrue(bar != null, "a bar for " + e);
            assertEquals(e.get("holder").asText(), bar.get("laneOf").asText(), "on its holder's lane: " + e);
            if (type.equals("grant")) {
                assertEquals(
                        Instant.parse(e.get("at").asText()),
                        Instant.parse(bar.get("t").asText()));
            } else {
                assertEquals("expired", bar.get("end").asText());
                assertEquals(
                        Instant.parse(e.get("at").asText()),
                        Instant.parse(bar.get("heldUntil").asText()));
                assertFalse(bar.get("lapsed").isNull(), "lapsed time is drawn, and apart from held time: " + bar);
                assertTrue(Math.abs(bar.get("lapsed").get("l").asDouble()
                                - bar.get("held").get("r").asDouble())
                        < 1.5);
            }
        }

        // Positions: each mark inside its lane's band; later marks further right; an accepted push inside
        // the held part of the lease it was made under.
        Map<String, JsonNode> bands = new HashMap<>();
        for (JsonNode l : g.get("lanes")) {
            bands.put(l.get("resource").asText() + " " + l.get("lane").asText(), l.get("box"));
        }
        List<JsonNode> singles = new ArrayList<>();
        for (JsonNode m : g.get("marks")) {
            JsonNode band =
                    bands.get(m.get("resource").asText() + " " + m.get("laneOf").asText());
            double cy =
                    (m.get("box").get("t").asDouble() + m.get("box").get("b").asDouble()) / 2;
            assertTrue(cy > band.get("t").asDouble() && cy < band.get("b").asDouble(), "in its lane: " + m);
            if (!m.has("count")) {
                singles.add(m);
            }
        }
        for (JsonNode a : singles) {
            for (JsonNode b : singles) {
                if (a.get("resource").equals(b.get("resource"))
                        && Instant.parse(a.get("t").asText())
                                .isBefore(Instant.parse(b.get("t").asText()))) {
                    assertTrue(cx(a) <= cx(b) + 0.5, a + " left of " + b);
                }
            }
            if (a.get("kind").asText().equals("accept")) {
                for (JsonNode bar : g.get("bars")) {
                    if (bar.get("resource").equals(a.get("resource"))
                            && bar.get("token").equals(a.get("token"))) {
                        JsonNode held = bar.get("held");
                        assertTrue(
                                cx(a) >= held.get("l").asDouble() - 0.5
                                        && cx(a) <= held.get("r").asDouble() + 0.5,
                                "accepted inside its lease: " + a + " " + bar);
                    }
                }
            }
        }

        // A tooltip carries token, old -> new, pusher and reason, never a proof.
        JsonNode fenced = null;
        for (JsonNode m : singles) {
            if (m.get("kind").asText().equals("fenced")
                    && m.has("old")
                    && m.get("laneOf").asText().equals("agent-A")) {
                fenced = m;
            }
        }
        assertTrue(fenced != null, "a FENCED push of agent-A drawn on its own: " + g.get("marks"));
        String tip =
                hover(tab, "g.m[data-kind=fenced][data-t=\"" + fenced.get("t").asText() + "\"][data-lane=agent-A]");
        assertTrue(tip.contains("FENCED push"), tip);
        assertTrue(tip.contains("token  " + fenced.get("token").asText()), tip);
        assertTrue(
                tip.contains(fenced.get("old").asText().substring(0, 12) + " \u2192 "
                        + fenced.get("new").asText().substring(0, 12)),
                tip);
        assertTrue(tip.contains("pusher " + fenced.get("pusher").asText()), tip);
        assertTrue(tip.contains("reason " + fenced.get("reason").asText()), tip);
        assertTrue(tip.contains("UTC") && tip.contains("local"), tip);
        assertFalse(tip.contains("fp2."), "no proof");
        assertFalse(Files.readString(page).contains("fp2."), "no proof anywhere on the page");
        String barTip = hover(tab, "g.bar[data-end=expired][data-holder=agent-A]");
        assertTrue(barTip.contains("lease of agent-A") && barTip.contains("lapsed until superseded"), barTip);
        String tickTip = hover(tab, "g.tick text");
        assertTrue(tickTip.contains("UTC") && tickTip.contains("local"), "UTC axis, local time on hover: " + tickTip);

        // The table filters by type and by holder.
        long fencedEvents = ledger.stream()
                .filter(e -> isPush(e) && expectedKind(e).equals("fenced"))
                .count();
        JsonNode shown = filter(tab, "fenced", "");
        assertEquals(fencedEvents, shown.get("visible").size(), shown.toString());
        shown.get("visible").forEach(r -> assertEquals("fenced", r.get("kind").asText()));
        assertEquals(
                fencedEvents + " of " + ledger.size() + " events",
                shown.get("shown").asText());
        long ofB = ledger.stream()
                .filter(e ->
                        (isPush(e) ? expectedLane(e, ledger) : e.path("holder").asText()).equals("agent-B"))
                .count();
        JsonNode b = filter(tab, "", "agent-B");
        assertEquals(ofB, b.get("visible").size(), b.toString());
        b.get("visible").forEach(r -> assertEquals("agent-B", r.get("lane").asText()));
        assertEquals(ledger.size(), filter(tab, "", "").get("visible").size());

        assertEquals(List.of(), tab.errors, "no console errors, no refused inline code");
        for (String url : tab.requests) {
            assertTrue(url.startsWith("file://"), "the page fetched " + url);
        }

        // The build's picture of the page, with a FENCED push's tooltip open.
        hover(tab, "g.m[data-kind=fenced][data-t=\"" + fenced.get("t").asText() + "\"][data-lane=agent-A]");
        Path shot = Path.of("target", "audit-demo.png");
        Files.createDirectories(shot.getParent());
        Files.write(shot, tab.screenshot());
    }

    static double cx(JsonNode m) {
        return (m.get("box").get("l").asDouble() + m.get("box").get("r").asDouble()) / 2;
    }

    /** Hovers the centre of the first element matching {@code selector}; returns the tooltip's text. */
    static String hover(Chromium.Tab tab, String selector) {
        JsonNode box = tab.eval("(() => { const el = document.querySelector(" + JSON.valueToTree(selector)
                + "); el.scrollIntoView({block: 'center', inline: 'center'}); const r = el.getBoundingClientRect();"
                + " return {x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2}; })()");
        tab.hover(box.get("x").asDouble(), box.get("y").asDouble());
        JsonNode tip = tab.eval("({hidden: document.getElementById('tip').hidden,"
                + " text: document.getElementById('tip').textContent})");
        assertFalse(tip.get("hidden").asBoolean(), "a tooltip shows on hovering " + selector);
        return tip.get("text").asText();
    }

    /** Picks {@code kind} and {@code lane} in the table's filters as a user would; returns the visible rows. */
    static JsonNode filter(Chromium.Tab tab, String kind, String lane) {
        return tab.eval("(() => { for (const [id, v] of [['f-kind', " + JSON.valueToTree(kind) + "], ['f-lane', "
                + JSON.valueToTree(lane) + "]]) { const s = document.getElementById(id); s.value = v;"
                + " s.dispatchEvent(new Event('change', {bubbles: true})); }"
                + " return {visible: [...document.querySelectorAll('#events tbody tr')].filter(r => !r.hidden)"
                + ".map(r => ({kind: r.dataset.kind, lane: r.dataset.lane})),"
                + " shown: document.getElementById('shown').textContent}; })()");
    }

    @Test
    void tenThousandEventsStayReadableAndFilterable() throws Exception {
        Instant t0 = Instant.parse("2026-11-29T14:00:00Z");
        List<LedgerEvent> events = new ArrayList<>();
        String resource = "git:app:refs/heads/main";
        int pushes = 0;
        int fencedPushes = 0;
        for (int i = 0; i < 10_000; i++) {
            String holder = "agent-" + (i % 12);
            Instant at = t0.plusMillis(i * 360L);
            if (i % 40 == 0) {
                events.add(LedgerEvent.lease(at, EventType.GRANT, resource, holder, i + 1));
                continue;
            }
            boolean fenced = i % 9 == 0;
            events.add(new LedgerEvent(
                    0,
                    at,
                    fenced ? EventType.REJECT : EventType.ACCEPT,
                    resource,
                    "app",
                    "refs/heads/main",
                    holder,
                    holder,
                    i,
                    "1".repeat(40),
                    "2".repeat(40),
                    fenced ? "stale-token" : "accepted",
                    null));
            pushes++;
            fencedPushes += fenced ? 1 : 0;
        }
        Path page = tmp.resolve("ten-thousand.html");
        Files.writeString(
                page,
                TimelinePage.render(
                        events,
                        new TimelinePage.Options("10,000 events", null, null, null, Instant.now(), null, null)));

        Chromium.Tab tab = browser.open(null, null);
        tab.viewport(1280, 900);
        long start = System.nanoTime();
        tab.navigate(page.toUri().toString());
        long loadMillis = (System.nanoTime() - start) / 1_000_000;
        JsonNode drawn = tab.eval("(() => { const ms = [...document.querySelectorAll('g.m')];"
                + " return {marks: ms.length, clusters: ms.filter(m => m.dataset.kind === 'cluster').length,"
                + " total: ms.reduce((n, m) => n + (m.dataset.count ? +m.dataset.count : 1), 0),"
                + " lanes: document.querySelectorAll('g.lane').length}; })()");
        assertEquals(12, drawn.get("lanes").asInt());
        assertEquals(pushes, drawn.get("total").asInt(), "every push counted once, alone or in a cluster");
        assertTrue(
                drawn.get("marks").asInt() <= 12 * (1000 / 7 + 1), "at most one mark per 7 units per lane: " + drawn);
        assertTrue(drawn.get("clusters").asInt() > 0, drawn.toString());
        String tip = hover(tab, "g.m[data-kind=cluster]");
        assertTrue(tip.matches("(?s)\\d+ marks on agent-\\d+:.*(FENCED push|accepted push).*from .*to .*"), tip);

        long filterStart = System.nanoTime();
        JsonNode shown = filter(tab, "fenced", "");
        long filterMillis = (System.nanoTime() - filterStart) / 1_000_000;
        assertEquals(fencedPushes, shown.get("visible").size());
        assertEquals(List.of(), tab.errors);
        assertTrue(
                loadMillis < 20_000 && filterMillis < 5_000,
                "load " + loadMillis + " ms, filter " + filterMillis + " ms");
    }

    @Test
    void auditIsServedToAuditorsOnlyAndAsksNothingOfOtherOrigins() throws Exception {
        String evil = "<img src=x onerror=\"window.__xss=1\">";
        // A name no new grant may carry (Names.requireHolder), as a store written by an older fence holds it;
        // granted after agent-a's, so that its resource is the newest activity.
        LegacyGrants.grant("sqlite:" + tmp.resolve("serve.db"), "db/migrations", "agent-a");
        LegacyGrants.grant("sqlite:" + tmp.resolve("serve.db"), "files/config", evil);
        try (TestServer t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("serve.db"), "")) {
            String auditor = t.add("reader", Role.AUDITOR);
            String agent = t.add("agent-a", Role.AGENT, "agent-a");
            String origin = t.url();

            String[] cred = auditor.split(":", 2);
            Chromium.Tab tab = browser.open(cred[0], cred[1]);
            tab.navigate(origin + "/audit");
            assertTrue(tab.statuses.contains("200 " + origin + "/audit"), tab.statuses.toString());
            JsonNode first = tab.eval("({resource: document.querySelector('section').dataset.resource,"
                    + " lane: document.querySelector('g.lane').dataset.lane,"
                    + " label: document.querySelector('g.lane title').textContent,"
                    + " scripts: document.scripts.length, xss: window.__xss === undefined,"
                    + " images: document.images.length,"
                    + " options: [...document.querySelectorAll('select[name=resource] option')].map(o => o.value)})");
            assertEquals("files/config", first.get("resource").asText(), "the newest activity first");
            assertEquals(evil, first.get("lane").asText(), "the holder's name, exactly, as text");
            assertEquals(evil, first.get("label").asText());
            assertEquals(1, first.get("scripts").asInt(), "only the page's own script");
            assertEquals(0, first.get("images").asInt());
            assertTrue(first.get("xss").asBoolean());
            assertEquals(List.of("files/config", "db/migrations"), JSON.convertValue(first.get("options"), List.class));

            // The picker: a same-origin GET with the resource and window as query parameters.
            tab.navigating(() -> tab.eval("(() => { const f = document.querySelector('form[data-picker]');"
                    + " f.resource.value = 'db/migrations'; f.since.value = '1h'; f.requestSubmit(); })()"));
            JsonNode second = tab.eval("({search: location.search,"
                    + " resource: document.querySelector('section').dataset.resource,"
                    + " lanes: [...document.querySelectorAll('g.lane')].map(g => g.dataset.lane),"
                    + " bars: document.querySelectorAll('g.bar[data-kind=lease][data-holder=agent-a]').length})");
            assertEquals(
                    "?resource=db%2Fmigrations&since=1h&until=",
                    second.get("search").asText());
            assertEquals("db/migrations", second.get("resource").asText());
            assertEquals("[\"agent-a\"]", second.get("lanes").toString());
            assertEquals(1, second.get("bars").asInt());
            assertTrue(hover(tab, "g.bar").contains("lease of agent-a"));

            assertEquals(List.of(), tab.errors, "no console errors");
            for (String url : tab.requests) {
                assertTrue(url.startsWith(origin + "/"), "the page asked another origin: " + url);
            }

            String[] agentCred = agent.split(":", 2);
            Chromium.Tab asAgent = browser.open(agentCred[0], agentCred[1]);
            asAgent.navigate(origin + "/audit");
            assertTrue(asAgent.statuses.contains("403 " + origin + "/audit"), asAgent.statuses.toString());
            assertEquals(
                    0,
                    asAgent.eval("document.querySelectorAll('[data-lane]').length")
                            .asInt());

            Chromium.Tab anonymous = browser.open(null, null);
            anonymous.navigate(origin + "/audit");
            assertTrue(anonymous.statuses.contains("401 " + origin + "/audit"), anonymous.statuses.toString());
            assertEquals(
                    0,
                    anonymous
                            .eval("document.querySelectorAll('[data-lane]').length")
                            .asInt());
        }
    }
}
