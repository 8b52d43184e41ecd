package dev.fence.hookpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** The clock fence runs with: the system's time in UTC, in the whole milliseconds the stores keep. */
class UtcMillisClockTest {
    @Test
    void tellsTheSystemTimeInWholeMillisecondsInUtc() {
        Clock clock = UtcMillisClock.INSTANCE;
        long before = System.currentTimeMillis();
        Instant now = clock.instant();
        long after = System.currentTimeMillis();
        assertTrue(
                before <= now.toEpochMilli() && now.toEpochMilli() <= after,
                now + " not in [" + before + ", " + after + "]");
        assertEquals(0, now.getNano() % 1_000_000, "whole milliseconds: " + now);
        long millis = clock.millis();
        assertTrue(millis >= now.toEpochMilli() && millis <= System.currentTimeMillis());
        assertEquals(ZoneOffset.UTC, clock.getZone());
    }

    @Test
    void anotherZoneIsTheSystemClockOfThatZone() {
        Clock clock = UtcMillisClock.INSTANCE;
        assertSame(clock, clock.withZone(ZoneOffset.UTC));
        ZoneId paris = ZoneId.of("Europe/Paris");
        assertEquals(paris, clock.withZone(paris).getZone());
    }
}
