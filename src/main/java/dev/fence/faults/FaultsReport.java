package dev.fence.faults;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Every fault's result: the table {@code fence faults} prints, its JSON, and the run's verdict. */
public final class FaultsReport {
    /** What the run as a whole shows. */
    public enum Verdict {
        /** At least one fault ran, and none found an anomaly or failed. */
        SAFE,
        /** Some fault found anomalies. */
        ANOMALIES,
        /** No anomaly, but some fault could not be run to the end (error), or none ran at all. */
        INCOMPLETE
    }

    private final List<FaultResult> results;

    FaultsReport(List<FaultResult> results) {
        this.results = List.copyOf(results);
    }

    public List<FaultResult> results() {
        return results;
    }

    public Verdict verdict() {
        boolean ran = false;
        boolean failed = false;
        for (FaultResult r : results) {
            switch (r.status()) {
                case ANOMALIES:
                    return Verdict.ANOMALIES;
                case ERROR:
                    failed = true;
                    break;
                case PASSED:
                    ran = true;
                    break;
                case SKIPPED:
                    break;
            }
        }
        return failed || !ran ? Verdict.INCOMPLETE : Verdict.SAFE;
    }

    /** The table, then each fault's anomaly examples and notes. */
    public String toTable() {
        StringBuilder sb = new StringBuilder();
        String format = "%-36s %-9s %7s %13s %9s %6s %4s %5s %5s %5s %5s %5s%n";
        sb.append(String.format(
                format,
                "fault",
                "result",
                "grants",
                "pushes ok/no",
                "stale ok",
                "errors",
                "gen",
                "a",
                "b",
                "c",
                "d",
                "e"));
        for (FaultResult r : results) {
            if (r.status() == FaultResult.Status.SKIPPED) {
                sb.append(String.format("%-36s %-9s %s%n", r.fault().id(), "skipped", r.reason()));
                continue;
            }
            HistoryChecker.Findings f = r.findings();
            sb.append(String.format(
                    format,
                    r.fault().id(),
                    r.status().word(),
                    r.grants(),
                    r.pushesAccepted() + "/" + r.pushesRefused(),
                    r.stalePushesAccepted() + "/" + r.stalePushes(),
                    r.errors(),
                    r.generationChanges(),
                    f == null ? "-" : Integer.toString(f.repeatedGrants()),
                    f == null ? "-" : Integer.toString(f.tokensBackwards()),
                    f == null ? "-" : Integer.toString(f.acceptedBelowAccepted()),
                    f == null ? "-" : Integer.toString(f.discardedCommits()),
                    f == null ? "-" : Integer.toString(f.staleAccepted())));
        }
        sb.append(String.format("%n"));
        sb.append(String.format("pushes ok/no: accepted/refused; stale ok: stale force-pushes accepted/tried;"
                + " gen: generation changes the clients saw%n"));
        sb.append(String.format("a: token granted twice or identical proofs; b: token not above an earlier grant's;"
                + " c: push accepted below an accepted token; d: commit discarded by another holder's push or a"
                + " stale one; e: stale force-push accepted%n"));
        for (FaultResult r : results) {
            if (r.status() == FaultResult.Status.SKIPPED) {
                continue;
            }
            List<String> lines = new ArrayList<>();
            if (r.reason() != null) {
                lines.add("error: " + r.reason());
            }
            if (r.findings() != null) {
                r.findings().examples().forEach(e -> lines.add("anomaly: " + e));
            }
            lines.addAll(r.notes());
            if (!r.refusals().isEmpty()) {
                lines.add("refused pushes: " + r.refusals());
            }
            sb.append(String.format(
                    "%n%s (%.0f s, %d clients, %d grants after the fault):%n",
                    r.fault().id(), r.seconds(), r.clients(), r.grantsAfterFault()));
            for (String l : lines) {
                sb.append("  ").append(l).append(String.format("%n"));
            }
        }
        return sb.toString();
    }

    /** The JSON shape of {@code fence faults --json}. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("verdict", verdict().name().toLowerCase(java.util.Locale.ROOT));
        List<Object> faults = new ArrayList<>();
        results.forEach(r -> faults.add(r.toMap()));
        m.put("faults", faults);
        return m;
    }
}
