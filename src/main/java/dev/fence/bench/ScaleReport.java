package dev.fence.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code fence bench --scale} measured: each row beside its baseline, measured in the same run, and
 * reported as a ratio to it, because absolute times on a shared machine mislead. A table for people or one
 * JSON object for programs (which {@link ScalePlot} draws).
 */
public final class ScaleReport {
    /** Design §7: verdicts and grants at the largest store sizes within 10 % of the empty store's. */
    static final double SIZE_RATIO = 1.10;

    /** Design §7: audit queries under 300 ms at 1M events. */
    static final double QUERY_MS = 300;

    /** Time per fenced ref in the store round trips of one push. */
    static final double PER_REF_MS = 0.2;

    /** GHES's budget for all pre-receive hooks of a push. */
    static final double PUSH_MS = 5000;

    /** The concurrency of the verdict targets. */
    static final int TARGET_CLIENTS = 64;

    /** fence serve at {@link #TARGET_CLIENTS} concurrent hooks. */
    static final double VERDICTS_PER_SECOND = 5000;

    static final double P99_MS = 20;

    /** The longest a verdict may wait behind a ledger trim. */
    static final double TRIM_BLOCK_MS = 10;

    /**
     * Hook verdicts and lease acquires against a seeded store, beside the same calls against an empty one.
     *
     * @param store the store kind
     * @param leases leased branches in the seeded store
     * @param events ledger events in the seeded store
     * @param verdictInterval the verdict ratio's 95 % interval over the rounds, or null when not known
     * @param acquireInterval the acquire ratio's, or null
     */
    record SizeRow(
            String store,
            long leases,
            long events,
            Stats verdictBase,
            Stats verdict,
            Stats acquireBase,
            Stats acquire,
            Bootstrap.Interval verdictInterval,
            Bootstrap.Interval acquireInterval) {
        double verdictRatio() {
            return ratio(verdict.median(), verdictBase.median());
        }

        double acquireRatio() {
            return ratio(acquire.median(), acquireBase.median());
        }
    }

    /** A ledger query over the seeded store. */
    record QueryRow(String store, long events, String query, int limit, int returned, Stats millis) {}

    /**
     * One push of {@code fenced} new branches and {@code refs - fenced} tags: its admission (store round trips
     * and decision), beside a push of one branch.
     */
    record RefsRow(String store, int refs, int fenced, Stats millis, Stats oneRefBase) {
        double perFencedRefMs() {
            return millis.median() / fenced;
        }
    }

    /**
     * A whole {@code git push} of {@code refs} refs through the Java hooks as {@code fence install --bare}
     * installs them (pre-receive, and post-receive recording the landings), beside the same push with no hook.
     */
    record PushRow(String store, int refs, int fenced, Stats hooked, Stats noHook) {}

    /**
     * Verdicts through fence serve at one concurrency.
     *
     * @param cpu where the CPU went over the counted window, per answer; null where it could not be read
     */
    record ConcurrencyRow(
            String store,
            int clients,
            double seconds,
            long accepted,
            long refused,
            long errors,
            Stats accept,
            Stats refusal,
            String firstError,
            CpuShare cpu) {
        double perSecond() {
            return accepted / seconds;
        }
    }

    /** Verdicts while a seeded ledger past its retention is trimmed, beside verdicts on an empty store. */
    record TrimRow(String store, long eventsBefore, long eventsAfter, Stats during, Stats base) {}

    private Map<String, Object> machine = new LinkedHashMap<>();
    private final List<SizeRow> sizes = new ArrayList<>();
    private final List<QueryRow> queries = new ArrayList<>();
    private final List<RefsRow> refs = new ArrayList<>();
    private final List<PushRow> pushes = new ArrayList<>();
    private final List<ConcurrencyRow> concurrency = new ArrayList<>();
    /** The same servers' bare exchanges ({@link ExchangeLoad}): answered requests count as accepted. */
    private final List<ConcurrencyRow> exchanges = new ArrayList<>();

    private final List<TrimRow> trims = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    void machine(Map<String, Object> m) {
        machine = m;
    }

    void size(SizeRow r) {
        sizes.add(r);
    }

    void query(QueryRow r) {
        queries.add(r);
    }

    void refs(RefsRow r) {
        refs.add(r);
    }

    void push(PushRow r) {
        pushes.add(r);
    }

    void concurrency(ConcurrencyRow r) {
        concurrency.add(r);
    }

    void exchange(ConcurrencyRow r) {
        exchanges.add(r);
    }

    /** The row of a store at {@code clients} among {@code rows}, or null when it was not measured. */
    private static ConcurrencyRow rowOf(List<ConcurrencyRow> rows, String store, int clients) {
        for (ConcurrencyRow e : rows) {
            if (e.store().equals(store) && e.clients() == clients) {
                return e;
            }
        }
        return null;
    }

    /** A load row's JSON: its store, clients, rate (under {@code rateKey}) and answer times. */
    private static Map<String, Object> rateRow(ConcurrencyRow r, String rateKey) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("store", r.store());
        row.put("clients", r.clients());
        row.put(rateKey, Math.round(r.perSecond()));
        row.put("p50Ms", round3(r.accept().median()));
        row.put("p99Ms", round3(r.accept().p99()));
        if (r.cpu() != null) {
            Map<String, Object> cpu = new LinkedHashMap<>();
            cpu.put("serveMicros", round3(r.cpu().serveMicros()));
            cpu.put("clientMicros", round3(r.cpu().clientMicros()));
            cpu.put("otherMicros", round3(r.cpu().otherMicros()));
            cpu.put("idleShare", round3(r.cpu().idleShare()));
            cpu.put("stolenShare", round3(r.cpu().stolenShare()));
            row.put("cpuPerAnswer", cpu);
        }
        return row;
    }

    /**
     * The rows' CPU per answer ({@link CpuShare}), under a heading that says where each column is read; nothing
     * when no row has it.
     */
    private static void cpuTable(StringBuilder out, String answer, List<ConcurrencyRow> rows) {
        if (rows.stream().allMatch(r -> r.cpu() == null)) {
            return;
        }
        out.append("\nWhere the CPU went, microseconds per ")
                .append(answer)
                .append(" (this JVM less its load clients' threads: fence serve, its JIT and collector;"
                        + " other processes: the store's server and anything else running)\n");
        out.append(String.format(
                Locale.ROOT,
                "%-11s %8s %12s %13s %16s %7s %9s%n",
                "store",
                "clients",
                "fence serve",
                "load clients",
                "other processes",
                "idle %",
                "stolen %"));
        for (ConcurrencyRow r : rows) {
            if (r.cpu() == null) {
                continue;
            }
            out.append(String.format(
                    Locale.ROOT,
                    "%-11s %8d %12.0f %13.0f %16.0f %7.1f %9.1f%n",
                    r.store(),
                    r.clients(),
                    r.cpu().serveMicros(),
                    r.cpu().clientMicros(),
                    r.cpu().otherMicros(),
                    r.cpu().idleShare() * 100,
                    r.cpu().stolenShare() * 100));
        }
    }

    void trim(TrimRow r) {
        trims.add(r);
    }

    void note(String n) {
        notes.add(n);
    }

    /** {@code value / base}, or NaN without a base. */
    static double ratio(double value, double base) {
        return base > 0 ? value / base : Double.NaN;
    }

    /** The largest seeded sizes of each store: the rows the 10 % target is judged on. */
    private List<SizeRow> largest() {
        List<SizeRow> out = new ArrayList<>();
        Map<String, SizeRow> byLeases = new LinkedHashMap<>();
        Map<String, SizeRow> byEvents = new LinkedHashMap<>();
        for (SizeRow r : sizes) {
            SizeRow l = byLeases.get(r.store());
            if (r.events() == 0 && (l == null || r.leases() > l.leases())) {
                byLeases.put(r.store(), r);
            }
            SizeRow e = byEvents.get(r.store());
            if (e == null || r.events() > e.events()) {
                byEvents.put(r.store(), r);
            }
        }
        out.addAll(byLeases.values());
        for (SizeRow r : byEvents.values()) {
            if (!out.contains(r)) {
                out.add(r);
            }
        }
        return out;
    }

    /** The budget lines: each target, the figure measured and whether it is met. */
    List<Map<String, Object>> targets() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (SizeRow r : largest()) {
            if (r.leases() <= 1 && r.events() == 0) {
                continue;
            }
            String where = String.format(
                    Locale.ROOT, "%s, %s leases, %s events", r.store(), count(r.leases()), count(r.events()));
            out.add(ratioTarget(
                    "verdict within 10 % of the empty store (" + where + ")", r.verdictRatio(), r.verdictInterval()));
            out.add(ratioTarget(
                    "acquire within 10 % of the empty store (" + where + ")", r.acquireRatio(), r.acquireInterval()));
        }
        for (QueryRow q : queries) {
            out.add(BenchReport.target(
                    String.format(
                            Locale.ROOT, "%s under 300 ms (%s, %s events)", q.query(), q.store(), count(q.events())),
                    ms(q.millis().median()),
                    q.millis().median() < QUERY_MS));
        }
        for (RefsRow r : refs) {
            if (r.refs() == maxRefs()) {
                out.add(BenchReport.target(
                        String.format(
                                Locale.ROOT, "under 0.2 ms per fenced ref (%s, %s refs)", r.store(), count(r.refs())),
                        String.format(Locale.ROOT, "%.3f ms", r.perFencedRefMs()),
                        r.perFencedRefMs() < PER_REF_MS));
            }
        }
        for (PushRow p : pushes) {
            out.add(BenchReport.target(
                    String.format(Locale.ROOT, "whole %s-ref push inside 5 s (%s)", count(p.refs()), p.store()),
                    ms(p.hooked().median()),
                    p.hooked().median() < PUSH_MS));
        }
        for (ConcurrencyRow c : concurrency) {
            if (c.clients() == TARGET_CLIENTS) {
                ConcurrencyRow bare = rowOf(exchanges, c.store(), c.clients());
                out.add(BenchReport.target(
                        "fence serve: at least 5,000 verdicts/s at 64 clients (" + c.store() + ")",
                        String.format(Locale.ROOT, "%.0f/s", c.perSecond())
                                + (bare == null
                                        ? ""
                                        : String.format(
                                                Locale.ROOT,
                                                " (%.2f of its bare exchanges' %.0f/s)",
                                                c.perSecond() / bare.perSecond(),
                                                bare.perSecond()))
                                + (c.cpu() == null
                                        ? ""
                                        : String.format(
                                                Locale.ROOT,
                                                ", the machine %.0f %% idle",
                                                c.cpu().idleShare() * 100)),
                        c.perSecond() >= VERDICTS_PER_SECOND));
                out.add(BenchReport.target(
                        "fence serve: p99 under 20 ms at 64 clients (" + c.store() + ")",
                        ms(c.accept().p99()),
                        c.accept().p99() < P99_MS));
            }
            if (c.clients() == maxClients()) {
                out.add(BenchReport.target(
                        "fence serve: no errors at " + c.clients() + " clients (" + c.store() + ")",
                        c.errors() + " errors, " + c.refused() + " refused fast",
                        c.errors() == 0));
            }
        }
        for (TrimRow t : trims) {
            // The tail beside the empty store's, not the maximum alone: on a shared machine any call may
            // stall for a scheduler's time slice, in both stores alike.
            double added = t.during().p99() - t.base().p99();
            out.add(BenchReport.target(
                    "a trim adds under 10 ms to the verdicts' p99 (" + t.store() + ")",
                    String.format(
                            Locale.ROOT,
                            "%+.2f ms (p99 %.2f beside %.2f; max %.2f beside %.2f)",
                            added,
                            t.during().p99(),
                            t.base().p99(),
                            t.during().max(),
                            t.base().max()),
                    added < TRIM_BLOCK_MS));
        }
        return out;
    }

    /** A store-size target: the ratio, and its interval over the row's rounds when known. */
    private static Map<String, Object> ratioTarget(String what, double ratio, Bootstrap.Interval interval) {
        if (interval == null) {
            return BenchReport.target(what, ratioText(ratio), ratio <= SIZE_RATIO);
        }
        return BenchReport.target(
                what,
                ratioText(ratio) + " (95 % interval " + ratioText(interval.low()) + " to " + ratioText(interval.high())
                        + ")",
                ratio <= SIZE_RATIO,
                interval,
                SIZE_RATIO);
    }

    private int maxRefs() {
        return refs.stream().mapToInt(RefsRow::refs).max().orElse(0);
    }

    private int maxClients() {
        return concurrency.stream().mapToInt(ConcurrencyRow::clients).max().orElse(0);
    }

    /** One JSON-ready map of everything. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("machine", machine);
        List<Map<String, Object>> s = new ArrayList<>();
        for (SizeRow r : sizes) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("store", r.store());
            row.put("leases", r.leases());
            row.put("events", r.events());
            row.put("verdictMedianMs", round3(r.verdict().median()));
            row.put("verdictP99Ms", round3(r.verdict().p99()));
            row.put("verdictBaseMedianMs", round3(r.verdictBase().median()));
            row.put("verdictRatio", round3(r.verdictRatio()));
            if (r.verdictInterval() != null) {
                row.put("verdictRatioLow", round3(r.verdictInterval().low()));
                row.put("verdictRatioHigh", round3(r.verdictInterval().high()));
            }
            row.put("acquireMedianMs", round3(r.acquire().median()));
            row.put("acquireP99Ms", round3(r.acquire().p99()));
            row.put("acquireBaseMedianMs", round3(r.acquireBase().median()));
            row.put("acquireRatio", round3(r.acquireRatio()));
            if (r.acquireInterval() != null) {
                row.put("acquireRatioLow", round3(r.acquireInterval().low()));
                row.put("acquireRatioHigh", round3(r.acquireInterval().high()));
            }
            row.put("samples", r.verdict().count());
            s.add(row);
        }
        m.put("storeSize", s);
        List<Map<String, Object>> q = new ArrayList<>();
        for (QueryRow r : queries) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("store", r.store());
            row.put("events", r.events());
            row.put("query", r.query());
            row.put("limit", r.limit());
            row.put("returned", r.returned());
            row.put("medianMs", round3(r.millis().median()));
            row.put("maxMs", round3(r.millis().max()));
            q.add(row);
        }
        m.put("ledgerQueries", q);
        List<Map<String, Object>> f = new ArrayList<>();
        for (RefsRow r : refs) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("store", r.store());
            row.put("refs", r.refs());
            row.put("fencedRefs", r.fenced());
            row.put("admitMedianMs", round3(r.millis().median()));
            row.put("perFencedRefMs", round3(r.perFencedRefMs()));
            row.put("oneRefMedianMs", round3(r.oneRefBase().median()));
            row.put(
                    "ratioToOneRef",
                    round3(ratio(r.millis().median(), r.oneRefBase().median())));
            f.add(row);
        }
        m.put("refsPerPush", f);
        List<Map<String, Object>> p = new ArrayList<>();
        for (PushRow r : pushes) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("store", r.store());
            row.put("refs", r.refs());
            row.put("fencedRefs", r.fenced());
            row.put("hookedMedianMs", round3(r.hooked().median()));
            row.put("noHookMedianMs", round3(r.noHook().median()));
            row.put("overNoHookMs", round3(r.hooked().median() - r.noHook().median()));
            p.add(row);
        }
        m.put("wholePushes", p);
        List<Map<String, Object>> c = new ArrayList<>();
        for (ConcurrencyRow r : concurrency) {
            Map<String, Object> row = rateRow(r, "verdictsPerSecond");
            row.put("accepted", r.accepted());
            row.put("refusedFast", r.refused());
            row.put("refusalP99Ms", round3(r.refusal().p99()));
            row.put("errors", r.errors());
            if (r.firstError() != null) {
                row.put("firstError", r.firstError());
            }
            c.add(row);
        }
        m.put("concurrentHooks", c);
        List<Map<String, Object>> x = new ArrayList<>();
        for (ConcurrencyRow r : exchanges) {
            Map<String, Object> row = rateRow(r, "exchangesPerSecond");
            row.put("errors", r.errors());
            ConcurrencyRow verdicts = rowOf(concurrency, r.store(), r.clients());
            if (verdicts != null && r.perSecond() > 0) {
                row.put("verdictShare", round3(verdicts.perSecond() / r.perSecond()));
            }
            x.add(row);
        }
        m.put("bareExchanges", x);
        List<Map<String, Object>> t = new ArrayList<>();
        for (TrimRow r : trims) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("store", r.store());
            row.put("eventsBefore", r.eventsBefore());
            row.put("eventsAfter", r.eventsAfter());
            row.put("verdicts", r.during().count());
            row.put("medianMs", round3(r.during().median()));
            row.put("p99Ms", round3(r.during().p99()));
            row.put("maxMs", round3(r.during().max()));
            row.put("baseMedianMs", round3(r.base().median()));
            row.put("baseMaxMs", round3(r.base().max()));
            t.add(row);
        }
        m.put("retention", t);
        m.put("targets", targets());
        m.put("notes", notes);
        return m;
    }

    /** The human-readable report. */
    public String toTable() {
        StringBuilder out = new StringBuilder();
        out.append("fence bench --scale: ")
                .append(machine.get("cpu"))
                .append(", ")
                .append(machine.get("cores"))
                .append(" cores, load ")
                .append(machine.get("loadAtStart"))
                .append(" at start; ")
                .append(machine.get("date"))
                .append('\n');
        if (!sizes.isEmpty()) {
            out.append(
                    "\nStore size: hook verdict and lease acquire, median ms (ratio to the empty store beside it)\n");
            String f = "%-11s %8s %10s %9s %9s %7s %9s %9s %7s%n";
            out.append(String.format(
                    Locale.ROOT,
                    f,
                    "store",
                    "leases",
                    "events",
                    "verdict",
                    "empty",
                    "ratio",
                    "acquire",
                    "empty",
                    "ratio"));
            for (SizeRow r : sizes) {
                out.append(String.format(
                        Locale.ROOT,
                        f,
                        r.store(),
                        count(r.leases()),
                        count(r.events()),
                        num(r.verdict().median()),
                        num(r.verdictBase().median()),
                        ratioText(r.verdictRatio()),
                        num(r.acquire().median()),
                        num(r.acquireBase().median()),
                        ratioText(r.acquireRatio())));
            }
        }
        if (!queries.isEmpty()) {
            out.append("\nLedger queries, median ms\n");
            for (QueryRow q : queries) {
                out.append(String.format(
                        Locale.ROOT,
                        "%-11s %10s events  %-44s %8s  (%d returned)%n",
                        q.store(),
                        count(q.events()),
                        q.query(),
                        num(q.millis().median()),
                        q.returned()));
            }
        }
        if (!refs.isEmpty()) {
            out.append("\nRefs per push: admission of one push (store round trips and decision), ms\n");
            String f = "%-11s %7s %7s %10s %12s %10s%n";
            out.append(String.format(Locale.ROOT, f, "store", "refs", "fenced", "median", "per fenced", "x 1 ref"));
            for (RefsRow r : refs) {
                out.append(String.format(
                        Locale.ROOT,
                        f,
                        r.store(),
                        r.refs(),
                        r.fenced(),
                        num(r.millis().median()),
                        String.format(Locale.ROOT, "%.4f", r.perFencedRefMs()),
                        ratioText(ratio(r.millis().median(), r.oneRefBase().median()))));
            }
        }
        if (!pushes.isEmpty()) {
            out.append("\nWhole git push through the Java hooks (pre- and post-receive), median ms\n");
            for (PushRow p : pushes) {
                out.append(String.format(
                        Locale.ROOT,
                        "%-11s %7d refs (%d fenced): %s with the hooks, %s with none%n",
                        p.store(),
                        p.refs(),
                        p.fenced(),
                        num(p.hooked().median()),
                        num(p.noHook().median())));
            }
        }
        if (!concurrency.isEmpty()) {
            out.append("\nConcurrent hooks through fence serve (shim-style requests, a connection each)\n");
            String f = "%-11s %8s %12s %8s %8s %9s %8s%n";
            out.append(String.format(
                    Locale.ROOT, f, "store", "clients", "verdicts/s", "p50 ms", "p99 ms", "refused", "errors"));
            for (ConcurrencyRow c : concurrency) {
                out.append(String.format(
                        Locale.ROOT,
                        f,
                        c.store(),
                        c.clients(),
                        Math.round(c.perSecond()),
                        num(c.accept().median()),
                        num(c.accept().p99()),
                        c.refused(),
                        c.errors()));
            }
            cpuTable(out, "answer", concurrency);
            if (!exchanges.isEmpty()) {
                out.append(
                        "\nThe same servers' bare exchanges (GET /healthz, a connection each, answered with no store):"
                                + " the most this machine's connections allow\n");
                String g = "%-11s %8s %12s %8s %8s %8s%n";
                out.append(
                        String.format(Locale.ROOT, g, "store", "clients", "exchanges/s", "p50 ms", "p99 ms", "errors"));
                for (ConcurrencyRow e : exchanges) {
                    out.append(String.format(
                            Locale.ROOT,
                            g,
                            e.store(),
                            e.clients(),
                            Math.round(e.perSecond()),
                            num(e.accept().median()),
                            num(e.accept().p99()),
                            e.errors()));
                }
                cpuTable(out, "exchange", exchanges);
            }
        }
        if (!trims.isEmpty()) {
            out.append("\nRetention at work: verdicts while the ledger past its retention is trimmed, ms\n");
            for (TrimRow t : trims) {
                out.append(String.format(
                        Locale.ROOT,
                        "%-11s %s -> %s events over %d verdicts: median %s, p99 %s, max %s (empty store: median %s, max %s)%n",
                        t.store(),
                        count(t.eventsBefore()),
                        count(t.eventsAfter()),
                        t.during().count(),
                        num(t.during().median()),
                        num(t.during().p99()),
                        num(t.during().max()),
                        num(t.base().median()),
                        num(t.base().max())));
            }
        }
        List<Map<String, Object>> targets = targets();
        if (!targets.isEmpty()) {
            BenchReport.targetLines(out, targets, 78, "");
        }
        for (String n : notes) {
            out.append("note: ").append(n).append('\n');
        }
        return out.toString();
    }

    /** 1000 → "1k", 100000 → "100k", 1000000 → "1M". */
    static String count(long n) {
        if (n >= 1_000_000 && n % 1_000_000 == 0) {
            return n / 1_000_000 + "M";
        }
        if (n >= 1000 && n % 1000 == 0) {
            return n / 1000 + "k";
        }
        return Long.toString(n);
    }

    private static String num(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static String ms(double v) {
        return String.format(Locale.ROOT, "%.2f ms", v);
    }

    private static String ratioText(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2fx", v);
    }

    /** Three decimals; null (JSON null) for no figure. */
    private static Double round3(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : Math.round(v * 1000) / 1000.0;
    }
}
