package dev.fence.bench;

import java.util.Arrays;
import java.util.Random;

/**
 * How far a figure computed from a run's rounds could move on a rerun of the same run: a percentile
 * bootstrap over rounds. What one round measured (a push of each scenario, taken in turn; a block of
 * calls on each of two stores) is kept together when resampling, so a moment of load that slowed all of
 * a round stays shared by what it slowed, as it was in the run; the interval is then that of the
 * figure, not of each row alone.
 *
 * <p>A fixed seed: the same run always reports the same interval.
 */
final class Bootstrap {
    /** Resamples drawn; past a thousand or so the interval's ends move by less than the figures' rounding. */
    static final int RESAMPLES = 2000;

    /** The share of resampled figures inside the interval. */
    static final double LEVEL = 0.95;

    private static final long SEED = 1;

    private Bootstrap() {}

    /**
     * The ends of an interval of a figure.
     *
     * @param low the low end
     * @param high the high end
     */
    record Interval(double low, double high) {
        /** True when {@code value} lies inside (ends included): a figure's budget that a rerun could cross. */
        boolean contains(double value) {
            return low <= value && value <= high;
        }
    }

    /** A figure computed from what some rounds measured. */
    @FunctionalInterface
    interface Figure {
        /**
         * The figure over these rounds.
         *
         * @param rounds round numbers, each in {@code [0, n)}, some repeated and some left out
         */
        double of(int[] rounds);
    }

    /**
     * The central {@link #LEVEL} interval of {@code figure} over {@link #RESAMPLES} resamples of {@code n}
     * rounds drawn with replacement, its ends by nearest rank (as {@link Stats}).
     *
     * @throws IllegalArgumentException for no rounds
     */
    static Interval interval(int n, Figure figure) {
        if (n <= 0) {
            throw new IllegalArgumentException("no rounds");
        }
        Random random = new Random(SEED);
        double[] figures = new double[RESAMPLES];
        int[] rounds = new int[n];
        for (int r = 0; r < RESAMPLES; r++) {
            for (int i = 0; i < n; i++) {
                rounds[i] = random.nextInt(n);
            }
            figures[r] = figure.of(rounds);
        }
        Arrays.sort(figures);
        double tail = (1 - LEVEL) / 2 * 100;
        return new Interval(Stats.percentile(figures, tail), Stats.percentile(figures, 100 - tail));
    }

    /**
     * The positions of whole blocks: for rounds measured as blocks of {@code size} values each (round
     * {@code r} is values {@code r * size} to {@code r * size + size - 1}), the values of {@code rounds}.
     */
    static int[] blocks(int[] rounds, int size) {
        int[] at = new int[rounds.length * size];
        for (int i = 0; i < rounds.length; i++) {
            for (int j = 0; j < size; j++) {
                at[i * size + j] = rounds[i] * size + j;
            }
        }
        return at;
    }

    /** The median (nearest rank) of {@code values} at positions {@code at} (repeats counted). */
    static double median(double[] values, int[] at) {
        double[] picked = new double[at.length];
        for (int i = 0; i < at.length; i++) {
            picked[i] = values[at[i]];
        }
        Arrays.sort(picked);
        return Stats.percentile(picked, 50);
    }
}
