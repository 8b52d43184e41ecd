package dev.fence.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BenchReportTest {
    @Test
    void aRedisHookBelowJdk25IsAllowedTheSocketsLambdasAndNoOtherRowIs() {
        assertEquals(20.0, BenchReport.hookBudget("redis17"));
        assertEquals(15.0, BenchReport.hookBudget("redis25"));
        assertEquals(15.0, BenchReport.hookBudget("sqlite17"));
        assertEquals(15.0, BenchReport.hookBudget("sqlite25"));
    }

    @Test
    void pushesThatNeverVaryGiveAnIntervalOfTheFigureAloneAndTheVerdictStands() {
        BenchReport report = new BenchReport();
        report.push(scenario("nohook", constant(60, 30)));
        report.push(scenario("reference", constant(80, 30)));
        report.push(scenario("floor17", constant(150, 30)));
        report.push(scenario("sqlite17", constant(170, 30)));
        report.push(scenario("shim", constant(78, 30)));

        Map<String, Object> hook = target(report, "SQLite");
        assertEquals(20.0, hook.get("low"));
        assertEquals(20.0, hook.get("high"));
        assertEquals(false, hook.get("met"));
        assertEquals(false, hook.get("budgetWithinInterval"));

        Map<String, Object> shim = target(report, "curl shim");
        assertEquals(0.9, shim.get("low"));
        assertEquals(0.9, shim.get("high"));
        assertEquals(true, shim.get("met"));
        assertFalse(report.toTable().contains("a rerun could turn the verdict"), report.toTable());
    }

    @Test
    void aVerdictThatNoiseCouldTurnIsMarkedAndOneItCouldNotIsNot() {
        Random random = new Random(3);
        BenchReport report = new BenchReport();
        report.push(scenario("nohook", noisy(random, 60, 8)));
        report.push(scenario("reference", noisy(random, 80, 8)));
        report.push(scenario("floor17", noisy(random, 150, 1)));
        // 16 ms over the floor, give or take 10: the 15 ms budget is inside any honest interval of it.
        report.push(scenario("sqlite17", noisy(random, 166, 10)));
        // The Redis hook, far under its budget however the rounds are drawn.
        report.push(scenario("redis17", noisy(random, 155, 1)));

        Map<String, Object> sqlite = target(report, "SQLite");
        double low = (Double) sqlite.get("low");
        double high = (Double) sqlite.get("high");
        assertTrue(low < 15 && 15 < high, sqlite.toString());
        assertEquals(true, sqlite.get("budgetWithinInterval"));

        Map<String, Object> redis = target(report, "Redis");
        assertEquals(true, redis.get("met"));
        assertEquals(false, redis.get("budgetWithinInterval"), redis.toString());

        String table = report.toTable();
        assertTrue(table.contains("a rerun could turn the verdict"), table);
        String sqliteLine = table.lines()
                .filter(l -> l.contains("Java hook, SQLite") && l.contains("at most"))
                .findFirst()
                .orElseThrow();
        assertTrue(sqliteLine.endsWith(" *"), sqliteLine);
        String redisLine = table.lines()
                .filter(l -> l.contains("Java hook, Redis") && l.contains("at most"))
                .findFirst()
                .orElseThrow();
        assertFalse(redisLine.endsWith(" *"), redisLine);
    }

    @Test
    void aNewServersFirstVerdictsAreShownByItsWarmUp() {
        BenchReport report = new BenchReport();
        report.newServer(0, Stats.of(9.0, 5.0, 7.0));
        report.newServer(10_000, Stats.of(1.5, 1.0, 2.0));

        String table = report.toTable();
        assertTrue(table.contains("--warm-up 0 (none):"), table);
        assertTrue(table.contains("3 verdicts: median 7.00 ms"), table);
        assertTrue(table.contains("after its --warm-up 10000:"), table);
        assertTrue(table.contains("3 verdicts: median 1.50 ms"), table);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows =
                (List<Map<String, Object>>) report.toMap().get("newServerVerdicts");
        assertEquals(2, rows.size());
        assertEquals(0, rows.get(0).get("warmUp"));
        assertEquals(7.0, rows.get(0).get("medianMs"));
        assertEquals(10_000, rows.get(1).get("warmUp"));
        assertEquals(1.5, rows.get(1).get("medianMs"));
        assertEquals(3, rows.get(1).get("requests"));
    }

    @Test
    void theIntervalIsTheSameForTheSameRunAndHoldsTheFigure() {
        double[] values = noisy(new Random(5), 100, 20).stream()
                .mapToDouble(Double::doubleValue)
                .toArray();
        int[] all = new int[values.length];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        double median = Bootstrap.median(values, all);
        Bootstrap.Interval one = Bootstrap.interval(values.length, r -> Bootstrap.median(values, r));
        Bootstrap.Interval again = Bootstrap.interval(values.length, r -> Bootstrap.median(values, r));
        assertEquals(one, again);
        assertTrue(one.contains(median), median + " in " + one);
        assertTrue(one.low() < one.high());
    }

    private static Map<String, Object> target(BenchReport report, String label) {
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> targets =
                (List<Map<String, Object>>) report.toMap().get("targets");
        return targets.stream()
                .filter(t -> ((String) t.get("target")).contains(label))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no target for " + label + ": " + targets));
    }

    private static PushBench.Scenario scenario(String id, List<Double> millis) {
        String label =
                switch (id) {
                    case "sqlite17" -> "Java hook, SQLite, JDK 17";
                    case "redis17" -> "Java hook, Redis, JDK 17";
                    default -> id;
                };
        PushBench.Scenario s = new PushBench.Scenario(id, label, null, Map.of(), (repo, bare) -> List.of());
        s.millis.addAll(millis);
        return s;
    }

    private static List<Double> constant(double ms, int rounds) {
        return java.util.Collections.nCopies(rounds, ms);
    }

    private static List<Double> noisy(Random random, double ms, double spread) {
        List<Double> out = new java.util.ArrayList<>();
        for (int i = 0; i < 30; i++) {
            out.add(ms + (random.nextDouble() * 2 - 1) * spread);
        }
        return out;
    }
}
