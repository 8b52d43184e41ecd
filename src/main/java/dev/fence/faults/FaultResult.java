package dev.fence.faults;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one fault run found.
 *
 * @param fault the fault
 * @param status passed, anomalies, skipped (could not run here) or error (the harness failed)
 * @param reason why it was skipped or failed, else null
 * @param seconds how long it ran, set-up and checks included
 * @param clients concurrent clients
 * @param grants grants the clients received
 * @param grantsAfterFault of those, granted after the fault was injected and the store was back
 * @param pushesAccepted pushes the hook and git accepted (stale ones included)
 * @param pushesRefused pushes refused (stale ones included)
 * @param stalePushes stale grants woken and force-pushed
 * @param stalePushesAccepted of those, accepted
 * @param errors client operations that failed (store down, refused configuration, ...)
 * @param findings the history checks, or null when the fault did not run
 * @param refusals refused pushes by reason (the FENCED line's reason code, or the hook's or git's message)
 * @param notes what the run did and saw, in order
 */
record FaultResult(
        Fault fault,
        Status status,
        String reason,
        double seconds,
        int clients,
        int grants,
        int grantsAfterFault,
        int pushesAccepted,
        int pushesRefused,
        int stalePushes,
        int stalePushesAccepted,
        int errors,
        HistoryChecker.Findings findings,
        Map<String, Integer> refusals,
        List<String> notes) {

    /** How a fault run ended. */
    public enum Status {
        PASSED,
        ANOMALIES,
        SKIPPED,
        ERROR;

        public String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public FaultResult {
        refusals = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(refusals));
        notes = List.copyOf(notes);
    }

    /** A fault that did not run here, and why. */
    static FaultResult skipped(Fault fault, String reason) {
        return new FaultResult(fault, Status.SKIPPED, reason, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, Map.of(), List.of());
    }

    /** Generation changes the clients saw: distinct generations of their grants, less one. */
    int generationChanges() {
        return findings == null ? 0 : Math.max(0, findings.generations() - 1);
    }

    /** The JSON shape of one fault in {@code fence faults --json}. */
    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("fault", fault.id());
        m.put("description", fault.description());
        m.put("status", status.word());
        if (reason != null) {
            m.put("reason", reason);
        }
        if (status == Status.SKIPPED) {
            return m;
        }
        m.put("seconds", Math.round(seconds * 10) / 10.0);
        m.put("clients", clients);
        Map<String, Object> ops = new LinkedHashMap<>();
        ops.put("grants", grants);
        ops.put("grantsAfterFault", grantsAfterFault);
        ops.put("pushesAccepted", pushesAccepted);
        ops.put("pushesRefused", pushesRefused);
        ops.put("stalePushes", stalePushes);
        ops.put("stalePushesAccepted", stalePushesAccepted);
        ops.put("errors", errors);
        m.put("operations", ops);
        m.put("generationChanges", generationChanges());
        if (findings != null) {
            Map<String, Object> a = new LinkedHashMap<>();
            a.put("repeatedGrants", findings.repeatedGrants());
            a.put("tokensBackwards", findings.tokensBackwards());
            a.put("acceptedBelowAccepted", findings.acceptedBelowAccepted());
            a.put("discardedCommits", findings.discardedCommits());
            a.put("staleAccepted", findings.staleAccepted());
            m.put("anomalies", a);
            m.put("examples", findings.examples());
        }
        m.put("refusals", new LinkedHashMap<>(refusals));
        m.put("notes", notes);
        return m;
    }
}
