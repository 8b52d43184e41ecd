package dev.fence.server;

import dev.fence.core.Reason;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * The server's Prometheus metrics, in a registry of its own (never the global default one, so that two
 * servers in one JVM, as in tests, count separately). Thread-safe.
 *
 * <p>Every label takes values from a closed set, so no caller can grow the number of series: an HTTP
 * method the API does not use is counted as {@code other}, and a path no route has as the route {@code
 * unmatched}. Every documented series of the counters exists from the start at 0, so a rate over a
 * counter that has not moved yet is 0 rather than absent.
 */
final class ServerMetrics {
    /** The methods the API's routes use; any other is counted as {@link #OTHER_METHOD}. */
    static final Set<String> METHODS = Set.of("GET", "POST");

    static final String OTHER_METHOD = "other";

    /** The operations of {@code fence_lease_operations_total}, as docs/api.md lists them. */
    static final List<String> LEASE_OPERATIONS =
            List.of("acquire", "renew", "release", "status", "proof", "move-sha", "grants");

    /** The outcomes of {@code fence_lease_operations_total}, as docs/api.md lists them. */
    static final List<String> LEASE_OUTCOMES = List.of(
            "granted",
            "busy",
            "renewed",
            "released",
            "issued",
            "moved",
            "fenced",
            "ok",
            "invalid",
            "forbidden",
            "store-unavailable",
            "error");

    /** The store operations the server times ({@link StoreCalls}). */
    static final List<String> STORE_OPERATIONS = List.of(
            "acquire", "renew", "release", "status", "proof", "move-sha", "grants", "audit", "readyz", "post-receive");

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter verdicts;
    private final LongAdder preReceiveVerdicts = new LongAdder();
    private final Counter leaseOps;
    private final Counter storeErrors;
    private final Counter authFailures;
    private final Counter shed;
    private final Histogram latency;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

    ServerMetrics() {
        verdicts = Counter.builder()
                .name("fence_hook_verdicts_total")
                .help("Hook requests judged, by hook, verdict (accept, reject, need) and reason code.")
                .labelNames("hook", "verdict", "reason")
                .withoutExemplars()
                .register(registry);
        leaseOps = Counter.builder()
                .name("fence_lease_operations_total")
                .help("Lease operations, by operation and outcome (granted, busy, renewed, released, issued,"
                        + " moved, fenced, ok, invalid, forbidden, store-unavailable, error).")
                .labelNames("operation", "outcome")
                .withoutExemplars()
                .register(registry);
        storeErrors = Counter.builder()
                .name("fence_store_errors_total")
                .help("Store calls that failed or did not answer within the store timeout, by operation.")
                .labelNames("operation")
                .withoutExemplars()
                .register(registry);
        authFailures = Counter.builder()
                .name("fence_auth_failures_total")
                .help("Requests refused for their credential, by HTTP status (401, 403).")
                .labelNames("status")
                .withoutExemplars()
                .register(registry);
        shed = Counter.builder()
                .name("fence_requests_shed_total")
                .help("Requests answered 503 because no thread took them within half the store timeout.")
                .withoutExemplars()
                .register(registry);
        latency = Histogram.builder()
                .name("fence_http_request_duration_seconds")
                .help("Time from reading a request to sending its response, by route, method and status.")
                .labelNames("route", "method", "status")
                .classicOnly()
                .classicUpperBounds(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
                .withoutExemplars()
                .register(registry);
        Info build = Info.builder()
                .name("fence_build_info")
                .help("The fence version serving (1 for the running build) and the Java runtime it runs on.")
                .labelNames("version", "java")
                .register(registry);
        build.addLabelValues(version(), Runtime.version().toString());
        ProcessMetrics.builder().register(registry);
        JvmMemoryMetrics.builder().register(registry);
        JvmThreadsMetrics.builder().register(registry);
        JvmGarbageCollectorMetrics.builder().register(registry);
        JvmRuntimeInfoMetric.builder().register(registry);
        initialise();
    }

    /** Creates every documented series at 0. */
    private void initialise() {
        for (Reason r : Reason.values()) {
            verdicts.initLabelValues("pre-receive", admits(r) ? "accept" : "reject", r.code());
        }
        // A push that touches no fenced ref, an empty one, and one let through by on-store-down = accept.
        for (String code : List.of("untouched", "empty", Reason.STORE_DOWN.code())) {
            verdicts.initLabelValues("pre-receive", "accept", code);
        }
        verdicts.initLabelValues("pre-receive", "need", "ancestry");
        verdicts.initLabelValues("post-receive", "recorded", "-");
        verdicts.initLabelValues("post-receive", "warning", "-");
        for (String operation : LEASE_OPERATIONS) {
            for (String outcome : LEASE_OUTCOMES) {
                leaseOps.initLabelValues(operation, outcome);
            }
        }
        STORE_OPERATIONS.forEach(storeErrors::initLabelValues);
        authFailures.initLabelValues("401");
        authFailures.initLabelValues("403");
    }

    private static boolean admits(Reason r) {
        return r == Reason.ACCEPTED || r == Reason.BUMPED || r == Reason.ALLOWED;
    }

    /** The version in the jar's manifest; {@code development} when run from classes. */
    static String version() {
        String v = ServerMetrics.class.getPackage().getImplementationVersion();
        return v == null ? "development" : v;
    }

    /** The method as counted: one of {@link #METHODS}, else {@link #OTHER_METHOD}. */
    static String methodLabel(String method) {
        return METHODS.contains(method) ? method : OTHER_METHOD;
    }

    void verdict(String hook, String verdict, String reason) {
        verdicts.labelValues(hook, verdict, reason).inc();
        if (hook.equals("pre-receive") && !verdict.equals("need")) {
            preReceiveVerdicts.increment();
        }
    }

    /** Pre-receive verdicts answered so far (not counting questions for ancestry). */
    long preReceiveVerdicts() {
        return preReceiveVerdicts.sum();
    }

    void leaseOperation(String operation, String outcome) {
        leaseOps.labelValues(operation, outcome).inc();
    }

    void storeError(String operation) {
        storeErrors.labelValues(operation).inc();
    }

    void authFailure(int status) {
        authFailures.labelValues(Integer.toString(status)).inc();
    }

    void shed() {
        shed.inc();
    }

    void request(String route, String method, int status, long nanos) {
        latency.labelValues(route, methodLabel(method), Integer.toString(status))
                .observe(nanos / 1e9);
    }

    /** The text exposition format, version 0.0.4. */
    Reply scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Reply(200, writer.getContentType(), out.toByteArray());
    }
}
