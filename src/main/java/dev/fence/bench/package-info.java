/**
 * {@code fence bench}: the benchmark that checks design section 7's budget on the machine it runs on
 * (push latency through each kind of hook, the server's verdict latency, lease throughput next to
 * {@code redis-benchmark}). Free of picocli: {@code dev.fence.cli.BenchCommand} only parses options.
 */
package dev.fence.bench;
