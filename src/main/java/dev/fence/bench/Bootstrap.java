package dev.fence.bench;

import java.util.Arrays;
import java.util.Random;

/**
 * How far a figure computed from a run's pushes could move on a rerun of the same run: a percentile
 * bootstrap over rounds. The pushes of one round (one push per scenario, taken in turn) are kept
 * together when resampling, so a moment of load that slowed every scenario of a round stays shared by
 * them, as it was in the run; the interval is then that of the figure, not of each row alone.
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

    /** A figure computed from rounds' pushes. */
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
     * rounds drawn with replacement: its low and high ends (nearest rank, as {@link Stats}).
     *
     * @throws IllegalArgumentException for no rounds
     */
    static double[] interval(int n, Figure figure) {
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
        return new double[] {Stats.percentile(figures, tail), Stats.percentile(figures, 100 - tail)};
    }

    /** The median (nearest rank) of {@code values} at {@code rounds}. */
    static double median(double[] values, int[] rounds) {
        double[] picked = new double[rounds.length];
        for (int i = 0; i < rounds.length; i++) {
            picked[i] = values[rounds[i]];
        }
        Arrays.sort(picked);
        return Stats.percentile(picked, 50);
    }
}
