package dev.fence.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What {@code fence bench} measured, as a table for people or one JSON object for programs. */
public final class BenchReport {
    /** The design's budget: the Java hook costs at most this much more than the JVM floor. */
    static final double HOOK_OVER_FLOOR_MS = 15.0;

    /**
     * A Redis hook on a JDK below 25 is allowed more: it connects over {@code java.net.Socket}, whose first use
     * in a JDK 17 process links the JDK's own lambdas (no JDK internals to avoid it), and no JDK 17 archive
     * holds them linked.
     */
    static final double REDIS_HOOK_BELOW_JDK25_OVER_FLOOR_MS = 20.0;

    /** The design's budget: the curl shim is at most this many times the reference hook. */
    static final double SHIM_TO_REFERENCE = 1.0;

    /** The design's budget: lease throughput at least this share of redis-benchmark's (8 and 32 callers). */
    static final double LEASES_TO_REDIS_BENCHMARK = 0.8;

    private Map<String, Object> machine = new LinkedHashMap<>();
    private final List<PushBench.Scenario> pushes = new ArrayList<>();
    private Stats verdicts;
    /** A new server's first verdicts, by its {@code --warm-up}. */
    private final Map<Integer, Stats> newServers = new LinkedHashMap<>();

    private final List<LeaseLoad.Row[]> leases = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private String loadAtEnd = "?";

    void machine(Map<String, Object> m) {
        machine = m;
    }

    void push(PushBench.Scenario s) {
        pushes.add(s);
    }

    void verdicts(Stats s) {
        verdicts = s;
    }

    void newServer(int warmUp, Stats s) {
        newServers.put(warmUp, s);
    }

    void lease(LeaseLoad.Row fence, LeaseLoad.Row redisBenchmark) {
        leases.add(new LeaseLoad.Row[] {fence, redisBenchmark});
    }

    void note(String note) {
        notes.add(note);
    }

    void loadAtEnd(String load) {
        loadAtEnd = load;
    }

    private PushBench.Scenario scenario(String id) {
        for (PushBench.Scenario s : pushes) {
            if (s.id.equals(id) && s.failure == null && !s.millis.isEmpty()) {
                return s;
            }
        }
        return null;
    }

    private Double median(String id) {
        PushBench.Scenario s = scenario(id);
        return s == null ? null : Stats.of(s.millis).median();
    }

    /** Median ms over the no-hook push, or null. */
    private Double over(String id) {
        Double m = median(id);
        Double base = median("nohook");
        return m == null || base == null ? null : m - base;
    }

    /** The JDK tag of a scenario id ("sqlite17" → "17"), or null. */
    private static String jdkOf(String id) {
        String digits = id.replaceAll("[^0-9]", "");
        return digits.isEmpty() ? null : digits;
    }

    /** Every scenario's figures, in order. */
    private List<Map<String, Object>> pushRows() {
        List<Map<String, Object>> rows = new ArrayList<>();
        Double reference = over("reference");
        for (PushBench.Scenario s : pushes) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("id", s.id);
            r.put("scenario", s.label);
            if (s.failure != null || s.millis.isEmpty()) {
                r.put("error", s.failure == null ? "no pushes" : s.failure);
                rows.add(r);
                continue;
            }
            Stats st = Stats.of(s.millis);
            r.put("pushes", st.count());
            r.put("medianMs", round(st.median()));
            r.put("p90Ms", round(st.p90()));
            Double over = over(s.id);
            if (over != null && !s.id.equals("nohook")) {
                r.put("overNoHookMs", round(over));
                if (reference != null && reference > 0 && !s.id.equals("reference")) {
                    r.put("toReference", round(over / reference));
                }
                String floorId = floorOf(s.id);
                Double floor = floorId == null ? null : over(floorId);
                if (floor != null && floor > 0 && !s.id.startsWith("floor")) {
                    r.put("toFloor", round(over / floor));
                    r.put("overFloorMs", round(over - floor));
                }
            }
            rows.add(r);
        }
        return rows;
    }

    /** The floor row a scenario is compared with: the floor of its JDK, else the first floor measured. */
    private String floorOf(String id) {
        String jdk = jdkOf(id);
        if (jdk != null && over("floor" + jdk) != null) {
            return "floor" + jdk;
        }
        for (PushBench.Scenario s : pushes) {
            if (s.id.startsWith("floor") && over(s.id) != null) {
                return s.id;
            }
        }
        return null;
    }

    /** A measured scenario's push times, by round. */
    private double[] times(String id) {
        return scenario(id).millis.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** The rounds every one of these (measured) scenarios has a push of. */
    private int rounds(String... ids) {
        int n = Integer.MAX_VALUE;
        for (String id : ids) {
            n = Math.min(n, scenario(id).millis.size());
        }
        return n;
    }

    /** The 95 % interval of a Java hook row's median over its floor's (ms). */
    private Bootstrap.Interval overFloorInterval(String id) {
        double[] hook = times(id);
        double[] floor = times(floorOf(id));
        return Bootstrap.interval(rounds(id, floorOf(id)), r -> Bootstrap.median(hook, r) - Bootstrap.median(floor, r));
    }

    /** The 95 % interval of a row's cost over a push with no hook, as a multiple of the reference hook's. */
    private Bootstrap.Interval toReferenceInterval(String id) {
        double[] row = times(id);
        double[] none = times("nohook");
        double[] reference = times("reference");
        return Bootstrap.interval(rounds(id, "nohook", "reference"), r -> {
            double base = Bootstrap.median(none, r);
            double ref = Bootstrap.median(reference, r) - base;
            return ref > 0 ? (Bootstrap.median(row, r) - base) / ref : Double.POSITIVE_INFINITY;
        });
    }

    /** The floor budget of a Java hook row ("redis17", "sqlite25", ...). */
    static double hookBudget(String id) {
        String jdk = jdkOf(id);
        boolean below25 = jdk != null && jdk.length() <= 3 && Integer.parseInt(jdk) < 25;
        return id.startsWith("redis") && below25 ? REDIS_HOOK_BELOW_JDK25_OVER_FLOOR_MS : HOOK_OVER_FLOOR_MS;
    }

    /** The budget lines: each target, the measured figure and whether it is met. */
    private List<Map<String, Object>> targets() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : pushRows()) {
            String id = (String) r.get("id");
            if ((id.startsWith("sqlite") || id.startsWith("redis")) && r.containsKey("overFloorMs")) {
                double over = (Double) r.get("overFloorMs");
                double budget = hookBudget(id);
                Bootstrap.Interval interval = overFloorInterval(id);
                out.add(target(
                        String.format(Locale.ROOT, "%s: at most JVM floor + %.0f ms", r.get("scenario"), budget),
                        String.format(
                                Locale.ROOT,
                                "floor + %.1f ms (95 %% interval %+.1f to %+.1f)",
                                over,
                                interval.low(),
                                interval.high()),
                        over <= budget,
                        interval,
                        budget));
            }
            if (id.equals("shim") && r.containsKey("toReference")) {
                double ratio = (Double) r.get("toReference");
                Bootstrap.Interval interval = toReferenceInterval(id);
                out.add(target(
                        "curl shim: at most 1.0x the reference hook",
                        String.format(
                                Locale.ROOT,
                                "%.2fx (95 %% interval %.2fx to %.2fx)",
                                ratio,
                                interval.low(),
                                interval.high()),
                        ratio <= SHIM_TO_REFERENCE,
                        interval,
                        SHIM_TO_REFERENCE));
            }
        }
        if (verdicts != null) {
            out.add(target(
                    "fence serve verdict: median under 2 ms",
                    String.format(Locale.ROOT, "%.2f ms", verdicts.median()),
                    verdicts.median() < 2.0));
        }
        for (LeaseLoad.Row[] l : leases) {
            if (l[1] != null && l[0].callers() >= 8) {
                double share = l[0].opsPerSecond() / l[1].opsPerSecond();
                out.add(target(
                        "lease acquires at " + l[0].callers() + " callers: at least 0.8x redis-benchmark",
                        String.format(Locale.ROOT, "%.2fx", share),
                        share >= LEASES_TO_REDIS_BENCHMARK));
            }
        }
        return out;
    }

    /** One budget line of a report: the target, the figure measured, whether it is met. */
    static Map<String, Object> target(String what, String measured, boolean met) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("target", what);
        m.put("measured", measured);
        m.put("met", met);
        return m;
    }

    /**
     * As {@link #target(String, String, boolean)}, with the figure's 95 % interval over the run's rounds
     * ({@link Bootstrap}) and whether the budget lies inside it: then a rerun of the same build on the same
     * machine could well turn the verdict, and only runs by turns tell two builds apart.
     */
    static Map<String, Object> target(
            String what, String measured, boolean met, Bootstrap.Interval interval, double budget) {
        Map<String, Object> m = target(what, measured, met);
        // Unbounded (a resample whose reference cost nothing) is JSON null, not a huge number.
        m.put("low", Double.isFinite(interval.low()) ? round(interval.low()) : null);
        m.put("high", Double.isFinite(interval.high()) ? round(interval.high()) : null);
        m.put("budgetWithinInterval", interval.contains(budget));
        return m;
    }

    /** One JSON-ready map of everything. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, Object> machineNow = new LinkedHashMap<>(machine);
        machineNow.put("loadAtEnd", loadAtEnd);
        m.put("machine", machineNow);
        m.put("pushes", pushRows());
        if (verdicts != null) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("requests", verdicts.count());
            v.put("medianMs", round3(verdicts.median()));
            v.put("p90Ms", round3(verdicts.p90()));
            v.put("p99Ms", round3(verdicts.p99()));
            m.put("serverVerdicts", v);
        }
        if (!newServers.isEmpty()) {
            List<Map<String, Object>> rows = new ArrayList<>();
            newServers.forEach((warmUp, s) -> {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("warmUp", warmUp);
                r.put("requests", s.count());
                r.put("medianMs", round3(s.median()));
                r.put("p90Ms", round3(s.p90()));
                rows.add(r);
            });
            m.put("newServerVerdicts", rows);
        }
        List<Map<String, Object>> l = new ArrayList<>();
        for (LeaseLoad.Row[] row : leases) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("callers", row[0].callers());
            r.put("fenceOpsPerSecond", Math.round(row[0].opsPerSecond()));
            r.put("fenceP99Ms", round3(row[0].p99Millis()));
            if (row[1] != null) {
                r.put("redisBenchmarkOpsPerSecond", Math.round(row[1].opsPerSecond()));
                r.put("redisBenchmarkP99Ms", round3(row[1].p99Millis()));
                r.put("share", round(row[0].opsPerSecond() / row[1].opsPerSecond()));
            }
            l.add(r);
        }
        m.put("leases", l);
        m.put("targets", targets());
        m.put("notes", notes);
        return m;
    }

    /** The human-readable report. */
    public String toTable() {
        StringBuilder out = new StringBuilder();
        out.append("fence bench: ")
                .append(machine.get("cpu"))
                .append(", ")
                .append(machine.get("cores"))
                .append(" cores, load ")
                .append(machine.get("loadAtStart"))
                .append(" at start, ")
                .append(loadAtEnd)
                .append(" at end\n");
        out.append(machine.get("git"))
                .append("; ")
                .append(machine.get("redis") == null ? "no redis" : machine.get("redis"))
                .append("; JDK ")
                .append(machine.get("jdk17"));
        if (machine.get("jdk25") != null) {
            out.append(" and ").append(machine.get("jdk25"));
        }
        out.append("\n\n");
        out.append(String.format(
                Locale.ROOT,
                "Pushes (%s each, one new fast-forward commit, git push to a local bare repo; ms)%n",
                machine.get("pushesPerScenario")));
        List<Map<String, Object>> rows = pushRows();
        int width = 46;
        for (Map<String, Object> r : rows) {
            width = Math.max(width, String.valueOf(r.get("scenario")).length());
        }
        String fmt = "%-" + width + "s %7s %7s %9s %7s %7s %8s%n";
        out.append(String.format(
                Locale.ROOT, fmt, "scenario", "median", "p90", "over none", "x ref", "x floor", "- floor"));
        for (Map<String, Object> r : rows) {
            if (r.containsKey("error")) {
                out.append(String.format(
                        Locale.ROOT, "%-" + width + "s %s%n", r.get("scenario"), "failed: " + r.get("error")));
                continue;
            }
            out.append(String.format(
                    Locale.ROOT,
                    fmt,
                    r.get("scenario"),
                    num(r.get("medianMs")),
                    num(r.get("p90Ms")),
                    num(r.get("overNoHookMs")),
                    ratio(r.get("toReference")),
                    ratio(r.get("toFloor")),
                    signed(r.get("overFloorMs"))));
        }
        if (verdicts != null) {
            out.append(String.format(
                    Locale.ROOT,
                    "%nfence serve verdicts (%d POSTs as the shim sends them, a connection each): median %.2f ms,"
                            + " p90 %.2f ms, p99 %.2f ms%n",
                    verdicts.count(),
                    verdicts.median(),
                    verdicts.p90(),
                    verdicts.p99()));
        }
        if (!newServers.isEmpty()) {
            out.append(String.format("%nA new fence serve's first verdicts (its own process, a new SQLite store)%n"));
            newServers.forEach((warmUp, s) -> out.append(String.format(
                    Locale.ROOT,
                    "  %-34s %d verdicts: median %.2f ms, p90 %.2f ms%n",
                    warmUp == 0 ? "--warm-up 0 (none):" : "after its --warm-up " + warmUp + ":",
                    s.count(),
                    s.median(),
                    s.p90())));
        }
        if (!leases.isEmpty()) {
            out.append(String.format(
                    Locale.ROOT,
                    "%nLease acquires: one long-running client (LeaseService on RedisLeaseStore) vs redis-benchmark"
                            + " (EVALSHA of the same acquire script, same keys)%n"));
            String lf = "%7s %12s %9s %18s %12s %7s%n";
            out.append(String.format(
                    Locale.ROOT, lf, "callers", "fence ops/s", "p99 ms", "redis-bench ops/s", "p99 ms", "share"));
            for (LeaseLoad.Row[] row : leases) {
                LeaseLoad.Row f = row[0];
                LeaseLoad.Row y = row[1];
                out.append(String.format(
                        Locale.ROOT,
                        lf,
                        f.callers(),
                        Math.round(f.opsPerSecond()),
                        String.format(Locale.ROOT, "%.3f", f.p99Millis()),
                        y == null ? "-" : Long.toString(Math.round(y.opsPerSecond())),
                        y == null ? "-" : String.format(Locale.ROOT, "%.3f", y.p99Millis()),
                        y == null ? "-" : String.format(Locale.ROOT, "%.2fx", f.opsPerSecond() / y.opsPerSecond())));
            }
        }
        targetLines(out, targets(), 72, " (compare builds by turns, with --baseline-jar)");
        for (String n : notes) {
            out.append("note: ").append(n).append('\n');
        }
        return out.toString();
    }

    /**
     * The "Targets" section of a report's table, one line a target (met or MISS, what, the figure); a
     * target whose budget lies inside its figure's interval is marked {@code *} and explained once below.
     *
     * @param width the width of the target column
     * @param advice what to do about a marked target, appended to its explanation ("" for nothing)
     */
    static void targetLines(StringBuilder out, List<Map<String, Object>> targets, int width, String advice) {
        if (targets.isEmpty()) {
            return;
        }
        out.append(String.format("%nTargets (design section 7)%n"));
        int close = 0;
        for (Map<String, Object> t : targets) {
            boolean within = Boolean.TRUE.equals(t.get("budgetWithinInterval"));
            close += within ? 1 : 0;
            out.append(String.format(
                    Locale.ROOT,
                    "  %-4s %-" + width + "s %s%s%n",
                    Boolean.TRUE.equals(t.get("met")) ? "met" : "MISS",
                    t.get("target"),
                    t.get("measured"),
                    within ? " *" : ""));
        }
        if (close > 0) {
            out.append("  * the budget lies inside the figure's 95 % interval over this run's rounds: a rerun could"
                    + " turn the verdict" + advice + "\n");
        }
    }

    private static String num(Object v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%.1f", (Double) v);
    }

    private static String signed(Object v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%+.1f", (Double) v);
    }

    private static String ratio(Object v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%.2fx", (Double) v);
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }

    private static double round3(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
