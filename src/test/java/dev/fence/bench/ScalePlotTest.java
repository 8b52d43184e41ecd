package dev.fence.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ScalePlotTest {
    @Test
    void thePlotDrawsALinePerStoreInEachPanelWithItsPointsAndTheTargets() {
        ScaleReport r = new ScaleReport();
        for (String store : new String[] {"sqlite", "redis"}) {
            r.size(new ScaleReport.SizeRow(
                    store, 1, 0, Stats.of(1), Stats.of(1), Stats.of(1), Stats.of(1), null, null));
            r.size(new ScaleReport.SizeRow(
                    store, 100_000, 0, Stats.of(1), Stats.of(1.05), Stats.of(1), Stats.of(1), null, null));
            r.size(new ScaleReport.SizeRow(
                    store, 100_000, 1_000_000, Stats.of(1), Stats.of(1.5), Stats.of(1), Stats.of(1), null, null));
            r.refs(new ScaleReport.RefsRow(store, 1, 1, Stats.of(0.4), Stats.of(0.4)));
            r.refs(new ScaleReport.RefsRow(store, 10_000, 5000, Stats.of(250), Stats.of(0.4)));
        }
        String svg = ScalePlot.svg(r.toMap());
        assertTrue(svg.startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""), svg);
        assertEquals(4, count(svg, "<polyline"), svg);
        assertEquals(10, count(svg, "<circle"), svg);
        assertTrue(svg.contains("100k / 1M"), svg);
        assertTrue(svg.contains("target 1.10x") && svg.contains("target 0.2 ms"), svg);
        assertTrue(svg.contains(">sqlite</text>") && svg.contains(">redis</text>"), svg);
        assertTrue(svg.trim().endsWith("</svg>"), svg);
    }

    @Test
    void rowsWithoutAFigureAreLeftOutRatherThanDrawnAtZero() {
        ScaleReport r = new ScaleReport();
        r.size(new ScaleReport.SizeRow("sqlite", 1, 0, Stats.of(), Stats.of(), Stats.of(), Stats.of(), null, null));
        String svg = ScalePlot.svg(r.toMap());
        assertEquals(0, count(svg, "<circle"), svg);
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
