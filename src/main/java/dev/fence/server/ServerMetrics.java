package dev.fence.server;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The server's Prometheus metrics, in a registry of its own (never the global default one, so that two
 * servers in one JVM, as in tests, count separately). Thread-safe.
 */
final class ServerMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter verdicts;
    private final Counter leaseOps;
    private final Counter storeErrors;
    private final Counter authFailures;
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
        latency = Histogram.builder()
                .name("fence_http_request_duration_seconds")
                .help("Time from reading a request to sending its response, by route, method and status.")
                .labelNames("route", "method", "status")
                .classicOnly()
                .classicUpperBounds(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
                .withoutExemplars()
                .register(registry);
    }

    void verdict(String hook, String verdict, String reason) {
        verdicts.labelValues(hook, verdict, reason).inc();
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

    void request(String route, String method, int status, long nanos) {
        latency.labelValues(route, method, Integer.toString(status)).observe(nanos / 1e9);
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
