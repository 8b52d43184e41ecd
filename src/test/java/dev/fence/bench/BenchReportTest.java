package dev.fence.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class BenchReportTest {
    @Test
    void aRedisHookBelowJdk25IsAllowedTheSocketsLambdasAndNoOtherRowIs() {
        assertEquals(20.0, BenchReport.hookBudget("redis17"));
        assertEquals(15.0, BenchReport.hookBudget("redis25"));
        assertEquals(15.0, BenchReport.hookBudget("sqlite17"));
        assertEquals(15.0, BenchReport.hookBudget("sqlite25"));
    }
}
