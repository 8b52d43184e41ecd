package dev.fence.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {
    @Test
    void percentilesAreNearestRankSoEveryFigureWasMeasured() {
        Stats s = Stats.of(List.of(5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 9.0, 8.0, 7.0, 6.0));
        assertEquals(10, s.count());
        assertEquals(5.0, s.median(), "the lower middle value of an even-sized sample");
        assertEquals(9.0, s.p90());
        assertEquals(10.0, s.p99());
        assertEquals(1.0, s.min());
        assertEquals(10.0, s.max());
    }

    @Test
    void oddSamplesAndSingleValues() {
        assertEquals(3.0, Stats.of(1, 2, 3, 4, 5).median());
        assertEquals(5.0, Stats.of(1, 2, 3, 4, 5).p90());
        Stats one = Stats.of(7.5);
        assertEquals(7.5, one.median());
        assertEquals(7.5, one.p99());
        assertEquals(0, Stats.of().count());
    }

    @Test
    void twentyPushesHaveTheirP90AtTheEighteenthValue() {
        double[] v = new double[20];
        for (int i = 0; i < 20; i++) {
            v[i] = 20 - i; // 20, 19, ..., 1: order does not matter
        }
        Stats s = Stats.of(v);
        assertEquals(10.0, s.median());
        assertEquals(18.0, s.p90());
        assertEquals(20.0, s.p99());
    }

    @Test
    void percentileOfNothingIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> Stats.percentile(new double[0], 50));
    }

    @Test
    void redisBenchmarkCsvLinesAreSplitOnQuotedFields() {
        List<String> f = LeaseLoad.csv(
                "\"EVALSHA abc 4 fence:meta \"\"x\"\" \",\"21505.38\",\"0.078\",\"0.016\",\"0.079\",\"0.127\",\"0.167\",\"0.335\"");
        assertEquals(8, f.size());
        assertEquals("EVALSHA abc 4 fence:meta \"x\" ", f.get(0));
        assertEquals("21505.38", f.get(1));
        assertEquals("0.167", f.get(6));
    }

    @Test
    void leaseKeysAreNamedAsRedisBenchmarkNamesThem() {
        assertEquals("bench/lease-000000000000", LeaseLoad.resourceName(0));
        assertEquals("bench/lease-000000123456", LeaseLoad.resourceName(123456));
        assertEquals("bench/lease-002147483647", LeaseLoad.resourceName(Integer.MAX_VALUE));
    }
}
