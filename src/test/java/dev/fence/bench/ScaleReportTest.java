package dev.fence.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScaleReportTest {
    private static Stats ms(double... v) {
        return Stats.of(v);
    }

    @Test
    void aRowIsTheRatioOfItsMedianToTheMedianOfItsBaselineBesideIt() {
        var row = new ScaleReport.SizeRow(
                "sqlite", 100_000, 0, ms(1, 2, 3), ms(2, 2.2, 9), ms(0.5, 0.5, 0.5), ms(0.5, 0.6, 0.4), null, null);
        assertEquals(1.1, row.verdictRatio(), 1e-9);
        assertEquals(1.0, row.acquireRatio(), 1e-9);
        assertTrue(Double.isNaN(ScaleReport.ratio(1, 0)));
    }

    @Test
    void theTenPercentTargetIsJudgedOnTheLargestSizesOfEachStoreNotOnTheBaseline() {
        ScaleReport r = new ScaleReport();
        r.size(new ScaleReport.SizeRow("redis", 1, 0, ms(1), ms(5), ms(1), ms(5), null, null));
        r.size(new ScaleReport.SizeRow("redis", 10_000, 0, ms(1), ms(3), ms(1), ms(3), null, null));
        r.size(new ScaleReport.SizeRow("redis", 100_000, 0, ms(1), ms(1.05), ms(1), ms(1.2), null, null));
        r.size(new ScaleReport.SizeRow("redis", 100_000, 1_000_000, ms(1), ms(1.09), ms(1), ms(0.9), null, null));
        List<Map<String, Object>> t = r.targets();
        assertEquals(4, t.size(), t.toString());
        assertTrue(t.get(0).get("target").toString().contains("100k leases, 0 events"), t.toString());
        assertEquals(true, t.get(0).get("met"));
        assertEquals(false, t.get(1).get("met"), "acquire at 1.2x misses");
        assertTrue(t.get(2).get("target").toString().contains("1M events"), t.toString());
        assertEquals(true, t.get(2).get("met"));
        assertEquals(true, t.get(3).get("met"));
    }

    @Test
    void refsAreJudgedPerFencedRefAtTheLargestPush() {
        ScaleReport r = new ScaleReport();
        r.refs(new ScaleReport.RefsRow("sqlite", 1, 1, ms(0.5), ms(0.5)));
        r.refs(new ScaleReport.RefsRow("sqlite", 10_000, 5000, ms(900, 1100, 1000), ms(0.5)));
        var targets = r.targets();
        assertEquals(1, targets.size(), targets.toString());
        assertEquals("0.200 ms", targets.get(0).get("measured"));
        assertEquals(false, targets.get(0).get("met"), "0.2 ms is not under 0.2 ms");
        Map<String, Object> row = rows(r.toMap(), "refsPerPush").get(1);
        assertEquals(0.2, row.get("perFencedRefMs"));
        assertEquals(2000.0, row.get("ratioToOneRef"));
    }

    @Test
    void concurrencyCountsOnlyAcceptedVerdictsAsThroughputAndWantsNoErrorsAtTheMost() {
        ScaleReport r = new ScaleReport();
        double[] fast = new double[100];
        java.util.Arrays.fill(fast, 2.0);
        fast[99] = 30;
        r.concurrency(new ScaleReport.ConcurrencyRow("redis", 64, 2.0, 12_000, 50, 0, ms(fast), ms(1), null, null));
        r.concurrency(new ScaleReport.ConcurrencyRow("redis", 256, 2.0, 9_000, 900, 3, ms(5), ms(1), "refused", null));
        var t = r.targets();
        assertEquals(3, t.size(), t.toString());
        assertEquals("6000/s", t.get(0).get("measured"));
        assertEquals(true, t.get(0).get("met"));
        assertEquals(true, t.get(1).get("met"), "p99 of 100 values is the 99th: 2 ms");
        assertEquals(false, t.get(2).get("met"));
    }

    @Test
    void aStoreSizeRatioCarriesTheIntervalOfItsPairedRoundsAndMarksABudgetInsideIt() {
        // Ten rounds of ten calls each: the seeded store 4 % slower in half the rounds and 16 % in the other
        // half (a figure near 10 % that the draw of rounds moves across it); the acquires 30 % slower in
        // every round alike.
        java.util.Random random = new java.util.Random(11);
        int rounds = 10;
        int perBlock = 10;
        double[] empty = new double[rounds * perBlock];
        double[] seeded = new double[rounds * perBlock];
        double[] slow = new double[rounds * perBlock];
        for (int i = 0; i < empty.length; i++) {
            double load = 1 + random.nextDouble() * 0.4;
            empty[i] = load;
            seeded[i] = load * ((i / perBlock) % 2 == 0 ? 1.04 : 1.16);
            slow[i] = load * 1.3;
        }
        Bootstrap.Interval verdict = Scale.ratioInterval(seeded, empty, rounds, perBlock);
        Bootstrap.Interval acquire = Scale.ratioInterval(slow, empty, rounds, perBlock);
        assertTrue(verdict.contains(1.10), verdict.toString());
        assertEquals(1.3, acquire.low(), 0.05);
        assertEquals(1.3, acquire.high(), 0.05);

        ScaleReport r = new ScaleReport();
        r.size(new ScaleReport.SizeRow(
                "sqlite",
                100_000,
                0,
                Stats.of(empty),
                Stats.of(seeded),
                Stats.of(empty),
                Stats.of(slow),
                verdict,
                acquire));
        var t = r.targets();
        assertEquals(true, t.get(0).get("budgetWithinInterval"), t.toString());
        assertTrue(t.get(0).get("measured").toString().contains("(95 % interval "), t.toString());
        assertEquals(false, t.get(1).get("met"));
        assertEquals(false, t.get(1).get("budgetWithinInterval"), "1.3x is clear of 1.1 however drawn");
        String table = r.toTable();
        assertTrue(table.contains("a rerun could turn the verdict"), table);
        @SuppressWarnings("unchecked")
        var rows = (List<Map<String, Object>>) r.toMap().get("storeSize");
        assertTrue(rows.get(0).containsKey("verdictRatioLow"), rows.toString());
    }

    @Test
    void theVerdictRateIsReadAgainstTheSameServersBareExchangesWhichAreNoVerdicts() {
        ScaleReport r = new ScaleReport();
        r.concurrency(new ScaleReport.ConcurrencyRow("sqlite", 64, 2.0, 6_000, 0, 0, ms(9), ms(), null, null));
        r.exchange(new ScaleReport.ConcurrencyRow("sqlite", 64, 2.0, 20_000, 0, 0, ms(3), ms(), null, null));
        var t = r.targets();
        assertEquals(3, t.size(), "the exchanges are no verdict row of their own: " + t);
        assertEquals("3000/s (0.30 of its bare exchanges' 10000/s)", t.get(0).get("measured"));
        assertEquals(false, t.get(0).get("met"));
        @SuppressWarnings("unchecked")
        var bare = (List<Map<String, Object>>) r.toMap().get("bareExchanges");
        assertEquals(10_000L, bare.get(0).get("exchangesPerSecond"));
        assertEquals(0.3, bare.get(0).get("verdictShare"));
        String table = r.toTable();
        assertTrue(table.contains("bare exchanges (GET /healthz"), table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("sqlite") && l.contains(" 10000 ")), table);
    }

    @Test
    void whereTheCpuWentIsShownPerAnswerAndTheRateTargetSaysHowIdleTheMachineWas() {
        ScaleReport r = new ScaleReport();
        var cpu = new CpuShare(221.6, 90.4, 5.2, 0.194, 0.001);
        r.concurrency(new ScaleReport.ConcurrencyRow("sqlite", 64, 2.0, 9_000, 0, 0, ms(9), ms(), null, cpu));
        r.concurrency(new ScaleReport.ConcurrencyRow("sqlite", 256, 2.0, 9_000, 0, 0, ms(30), ms(), null, null));
        r.exchange(new ScaleReport.ConcurrencyRow(
                "sqlite", 64, 2.0, 20_000, 0, 0, ms(3), ms(), null, new CpuShare(129, 91, 1, 0.018, 0)));
        assertEquals(
                "4500/s (0.45 of its bare exchanges' 10000/s), the machine 19 % idle",
                r.targets().get(0).get("measured"));
        Map<String, Object> row = rows(r.toMap(), "concurrentHooks").get(0);
        assertEquals(
                Map.of(
                        "serveMicros", 221.6,
                        "clientMicros", 90.4,
                        "otherMicros", 5.2,
                        "idleShare", 0.194,
                        "stolenShare", 0.001),
                row.get("cpuPerAnswer"));
        assertNull(rows(r.toMap(), "concurrentHooks").get(1).get("cpuPerAnswer"), "not read: left out");
        assertEquals(
                129.0, ((Map<?, ?>) rows(r.toMap(), "bareExchanges").get(0).get("cpuPerAnswer")).get("serveMicros"));
        String table = r.toTable();
        assertTrue(table.contains("Where the CPU went, microseconds per answer"), table);
        assertTrue(table.contains("Where the CPU went, microseconds per exchange"), table);
        assertTrue(table.lines().anyMatch(l -> l.matches("sqlite +64 +222 +90 +5 +19\\.4 +0\\.1")), table);
        assertFalse(table.lines().anyMatch(l -> l.matches("sqlite +256 +\\d+ +\\d+ +\\d+ +[0-9.]+ +[0-9.]+")), table);
    }

    @Test
    void withoutCpuFiguresThereIsNoCpuTable() {
        ScaleReport r = new ScaleReport();
        r.concurrency(new ScaleReport.ConcurrencyRow("redis", 64, 2.0, 9_000, 0, 0, ms(9), ms(), null, null));
        assertFalse(r.toTable().contains("Where the CPU went"), r.toTable());
        assertFalse(r.targets().get(0).get("measured").toString().contains("idle"));
    }

    @Test
    void aTrimIsJudgedByHowMuchItAddsToTheVerdictsTailBesideTheEmptyStore() {
        ScaleReport r = new ScaleReport();
        r.trim(new ScaleReport.TrimRow("sqlite", 1_000_000, 10, ms(1, 2, 13), ms(1, 2, 4)));
        r.trim(new ScaleReport.TrimRow("redis", 1_000_000, 10, ms(1, 2, 15), ms(1, 2, 4)));
        var t = r.targets();
        assertEquals(true, t.get(0).get("met"), t.toString());
        assertEquals(false, t.get(1).get("met"), t.toString());
    }

    @Test
    void countsAreShortAndJsonHasNoNaN() {
        assertEquals("1M", ScaleReport.count(1_000_000));
        assertEquals("100k", ScaleReport.count(100_000));
        assertEquals("1500", ScaleReport.count(1500));
        assertEquals("1", ScaleReport.count(1));
        ScaleReport r = new ScaleReport();
        r.size(new ScaleReport.SizeRow("sqlite", 1, 0, ms(), ms(), ms(), ms(), null, null));
        Map<String, Object> row = rows(r.toMap(), "storeSize").get(0);
        assertNull(row.get("verdictRatio"));
        assertFalse(r.toTable().contains("NaN"), r.toTable());
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> rows(Map<String, Object> m, String key) {
        return (List<Map<String, Object>>) m.get(key);
    }
}
