package dev.fence.bench;

import java.util.Arrays;
import java.util.List;

/**
 * Order statistics of a sample: nearest-rank percentiles (the smallest value with at least p % of the
 * sample at or below it), so that every figure reported is a value that was measured.
 *
 * @param count how many values
 * @param median the 50th percentile
 * @param p90 the 90th percentile
 * @param p99 the 99th percentile
 * @param min the smallest value
 * @param max the largest value
 */
record Stats(int count, double median, double p90, double p99, double min, double max) {

    /** The statistics of {@code values}; an empty sample is all zeros. */
    public static Stats of(double... values) {
        if (values.length == 0) {
            return new Stats(0, 0, 0, 0, 0, 0);
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return new Stats(
                sorted.length,
                percentile(sorted, 50),
                percentile(sorted, 90),
                percentile(sorted, 99),
                sorted[0],
                sorted[sorted.length - 1]);
    }

    /** As {@link #of(double...)}. */
    public static Stats of(List<Double> values) {
        return of(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /**
     * The nearest-rank {@code p}th percentile of an ascending array: the value at rank {@code ceil(p/100 *
     * n)} (1-based). The median of an even-sized sample is thus its lower middle value.
     */
    static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            throw new IllegalArgumentException("no values");
        }
        if (p <= 0) {
            return sorted[0];
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
    }
}
