package dev.fence.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws the JSON of {@code fence bench --scale} as one small SVG: the hook verdict's time against the
 * store's size (as a ratio to the empty store beside it) and the time per fenced ref against the refs of one
 * push, one line per store, with the design's targets dashed. Plain SVG, no fonts or scripts fetched.
 */
public final class ScalePlot {
    private static final int W = 360;
    private static final int H = 260;
    private static final int LEFT = 52;
    private static final int RIGHT = 14;
    private static final int TOP = 34;
    private static final int BOTTOM = 58;
    private static final Map<String, String> COLOURS =
            Map.of("sqlite", "#1f77b4", "redis", "#d62728", "postgresql", "#2ca02c");

    private ScalePlot() {}

    /** Writes the plot of {@code json} (a parsed {@code --scale --json} object) to {@code file}. */
    public static void write(Map<String, Object> json, Path file) throws IOException {
        Files.writeString(file, svg(json), StandardCharsets.UTF_8);
    }

    /** One series: a store's points, x as category labels. */
    record Series(String store, List<String> x, List<Double> y) {}

    /** The SVG text of the plot of {@code json}. */
    static String svg(Map<String, Object> json) {
        List<Series> sizes = series(
                rows(json, "storeSize"),
                r -> ScaleReport.count(num(r, "leases").longValue()) + " / "
                        + ScaleReport.count(num(r, "events").longValue()),
                "verdictRatio");
        List<Series> refs = series(
                rows(json, "refsPerPush"), r -> ScaleReport.count(num(r, "refs").longValue()), "perFencedRefMs");
        StringBuilder s = new StringBuilder();
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
                .append(2 * W)
                .append("\" height=\"")
                .append(H)
                .append("\" font-family=\"sans-serif\" font-size=\"11\">\n");
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        Object machine = json.get("machine");
        String date = machine instanceof Map<?, ?> m && m.get("date") != null
                ? m.get("date").toString()
                : "";
        if (date.length() > 16 && date.charAt(10) == 'T') {
            date = date.substring(0, 10) + " " + date.substring(11, 16) + " UTC";
        }
        panel(
                s,
                0,
                "hook verdict vs store size (x empty store)",
                "leased branches / ledger events",
                sizes,
                1.10,
                "1.10x",
                true);
        panel(
                s,
                W,
                "refs per push: admission ms per fenced ref",
                "refs in the push (half fenced)",
                refs,
                ScaleReport.PER_REF_MS,
                "0.2 ms",
                false);
        int lx = 10;
        for (String store : Scale.STORES) {
            if (sizes.stream().anyMatch(x -> x.store().equals(store))
                    || refs.stream().anyMatch(x -> x.store().equals(store))) {
                s.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>",
                        lx,
                        H - 12,
                        COLOURS.get(store)));
                s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 16, H - 8, store));
                lx += 90;
            }
        }
        s.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\">fence bench --scale, %s</text>\n",
                2 * W - 10,
                H - 8,
                esc(date)));
        s.append("</svg>\n");
        return s.toString();
    }

    private static void panel(
            StringBuilder s,
            int ox,
            String title,
            String xLabel,
            List<Series> series,
            double target,
            String targetLabel,
            boolean fromOne) {
        int pw = W - LEFT - RIGHT;
        int ph = H - TOP - BOTTOM;
        List<String> cats = new ArrayList<>();
        double max = target * 1.2;
        double min = fromOne ? Math.min(0.9, target) : 0;
        for (Series se : series) {
            for (int i = 0; i < se.x().size(); i++) {
                if (!cats.contains(se.x().get(i))) {
                    cats.add(se.x().get(i));
                }
                max = Math.max(max, se.y().get(i) * 1.05);
                if (fromOne) {
                    min = Math.min(min, se.y().get(i) * 0.95);
                }
            }
        }
        s.append(String.format(
                Locale.ROOT, "<text x=\"%d\" y=\"18\" font-weight=\"bold\">%s</text>\n", ox + 10, esc(title)));
        s.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
                ox + LEFT,
                TOP,
                pw,
                ph));
        for (int t = 0; t <= 4; t++) {
            double v = min + (max - min) * t / 4;
            double y = TOP + ph - ph * t / 4.0;
            s.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    ox + LEFT - 4,
                    y + 4,
                    fmt(v)));
            s.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                    ox + LEFT,
                    ox + LEFT + pw,
                    y,
                    y));
        }
        double ty = y(target, min, max, ph);
        s.append(String.format(
                Locale.ROOT,
                "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>\n",
                ox + LEFT,
                ox + LEFT + pw,
                ty,
                ty));
        s.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">target %s</text>\n",
                ox + LEFT + pw - 4,
                ty - 4,
                esc(targetLabel)));
        for (int i = 0; i < cats.size(); i++) {
            s.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    x(ox, i, cats.size(), pw),
                    TOP + ph + 14,
                    esc(cats.get(i))));
        }
        s.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#444\">%s</text>\n",
                ox + LEFT + pw / 2,
                TOP + ph + 30,
                esc(xLabel)));
        for (Series se : series) {
            StringBuilder pts = new StringBuilder();
            for (int i = 0; i < se.x().size(); i++) {
                double px = x(ox, cats.indexOf(se.x().get(i)), cats.size(), pw);
                double py = y(se.y().get(i), min, max, ph);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
                s.append(String.format(
                        Locale.ROOT,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
                        px,
                        py,
                        COLOURS.getOrDefault(se.store(), "#000")));
            }
            s.append(String.format(
                    Locale.ROOT,
                    "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                    pts.toString().trim(),
                    COLOURS.getOrDefault(se.store(), "#000")));
        }
    }

    private static double x(int ox, int i, int n, int pw) {
        return ox + LEFT + pw * (i + 0.5) / Math.max(1, n);
    }

    private static double y(double v, double min, double max, int ph) {
        return TOP + ph - ph * (v - min) / (max - min);
    }

    private static String fmt(double v) {
        return v >= 10 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String esc(String t) {
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> rows(Map<String, Object> json, String key) {
        Object v = json.get(key);
        return v instanceof List<?> l ? (List<Map<String, Object>>) l : List.of();
    }

    private static Number num(Map<String, Object> row, String key) {
        Object v = row.get(key);
        return v instanceof Number n ? n : Double.NaN;
    }

    private static List<Series> series(
            List<Map<String, Object>> rows,
            java.util.function.Function<Map<String, Object>, String> label,
            String key) {
        Map<String, Series> out = new LinkedHashMap<>();
        for (Map<String, Object> r : rows) {
            double y = num(r, key).doubleValue();
            if (Double.isNaN(y)) {
                continue;
            }
            String store = String.valueOf(r.get("store"));
            Series se = out.computeIfAbsent(store, st -> new Series(st, new ArrayList<>(), new ArrayList<>()));
            se.x().add(label.apply(r));
            se.y().add(y);
        }
        return new ArrayList<>(out.values());
    }
}
