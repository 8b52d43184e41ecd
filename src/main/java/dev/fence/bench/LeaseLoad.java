package dev.fence.bench;

import dev.fence.core.LeaseService;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Lease throughput: concurrent callers acquiring leases through one long-running client ({@link
 * LeaseService} on one store), next to {@code redis-benchmark} sending the same acquire script with the
 * same keys and arguments at the same concurrency.
 */
final class LeaseLoad {
    /** Random resource numbers range over this many names, as redis-benchmark's {@code -r}. */
    static final int KEYSPACE = 100_000;

    /** Resource names, with redis-benchmark's placeholder for a random 12-digit number. */
    static final String RESOURCE_PATTERN = "bench/lease-__rand_int__";

    private LeaseLoad() {}

    /** {@link #RESOURCE_PATTERN} with {@code __rand_int__} as {@code n} in 12 digits. */
    static String resourceName(int n) {
        String digits = Integer.toString(n);
        return RESOURCE_PATTERN.substring(0, RESOURCE_PATTERN.indexOf("__rand_int__"))
                + "000000000000".substring(Math.min(12, digits.length()))
                + digits;
    }

    /** Throughput and latency at one concurrency. */
    record Row(int callers, long ops, double opsPerSecond, double medianMillis, double p99Millis) {}

    /**
     * {@code callers} threads call {@link LeaseService#acquire} back to back on random resources, first
     * for {@code warmup} (not counted), then for {@code duration}.
     */
    static Row fence(LeaseService service, int callers, Duration warmup, Duration duration) throws IOException {
        long[][] latencies = new long[callers][];
        int[] counts = new int[callers];
        CountDownLatch ready = new CountDownLatch(callers);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] window = new long[2];
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < callers; t++) {
            int me = t;
            Thread thread = new Thread(
                    () -> {
                        long[] mine = new long[1 << 14];
                        int n = 0;
                        ready.countDown();
                        try {
                            go.await();
                            while (true) {
                                // The key as redis-benchmark makes it (__rand_int__: 12 digits), chosen before
                                // the clock starts: the harness's own work is not the client's latency.
                                String resource =
                                        resourceName(ThreadLocalRandom.current().nextInt(KEYSPACE));
                                long start = System.nanoTime();
                                if (start >= window[1]) {
                                    break;
                                }
                                service.acquire(resource, "bench", Duration.ofMinutes(1), null);
                                long end = System.nanoTime();
                                if (start >= window[0] && end <= window[1]) {
                                    if (n == mine.length) {
                                        mine = Arrays.copyOf(mine, n * 2);
                                    }
                                    mine[n++] = end - start;
                                }
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                        latencies[me] = mine;
                        counts[me] = n;
                    },
                    "bench-lease-" + t);
            threads.add(thread);
            thread.start();
        }
        try {
            ready.await();
            long now = System.nanoTime();
            window[0] = now + warmup.toNanos();
            window[1] = window[0] + duration.toNanos();
            go.countDown();
            for (Thread t : threads) {
                t.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (failure.get() != null) {
            throw new IOException("lease calls failed: " + failure.get(), failure.get());
        }
        int total = 0;
        for (int c : counts) {
            total += c;
        }
        double[] ms = new double[total];
        int i = 0;
        for (int t = 0; t < callers; t++) {
            for (int j = 0; j < counts[t]; j++) {
                ms[i++] = latencies[t][j] / 1e6;
            }
        }
        Stats s = Stats.of(ms);
        return new Row(callers, total, total / (duration.toNanos() / 1e9), s.median(), s.p99());
    }

    /**
     * Runs {@code redis-benchmark} with {@code requests} EVALSHA calls at {@code callers} connections and
     * reads its CSV line.
     *
     * @param evalsha the EVALSHA arguments after the command name, with {@code __rand_int__} placeholders
     */
    static Row redisBenchmark(
            Path redisBenchmark, int port, List<String> evalsha, int callers, int requests, Map<String, String> env)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                redisBenchmark.toString(),
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-c",
                Integer.toString(callers),
                "-n",
                Integer.toString(requests),
                "-r",
                Integer.toString(KEYSPACE),
                "--csv",
                "EVALSHA"));
        cmd.addAll(evalsha);
        String out = Procs.check(Path.of("."), env, cmd);
        String[] lines = out.split("\n");
        String last = lines[lines.length - 1];
        List<String> fields = csv(last);
        if (fields.size() < 7 || !fields.get(0).startsWith("EVALSHA")) {
            throw new IOException("unexpected redis-benchmark output: " + out);
        }
        return new Row(
                callers,
                requests,
                Double.parseDouble(fields.get(1)),
                Double.parseDouble(fields.get(4)),
                Double.parseDouble(fields.get(6)));
    }

    /** The fields of one CSV line whose fields are all double-quoted. */
    static List<String> csv(String line) {
        List<String> out = new ArrayList<>();
        int i = 0;
        while (i < line.length()) {
            if (line.charAt(i) != '"') {
                i++;
                continue;
            }
            StringBuilder f = new StringBuilder();
            i++;
            while (i < line.length()) {
                char c = line.charAt(i);
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    f.append('"');
                    i += 2;
                } else if (c == '"') {
                    i++;
                    break;
                } else {
                    f.append(c);
                    i++;
                }
            }
            out.add(f.toString());
        }
        return out;
    }
}
