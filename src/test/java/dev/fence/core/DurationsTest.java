package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void readsEveryUnitAndWritesTheLargestExactOne() {
        assertEquals(Duration.ofMillis(500), Durations.parsePositive("t", "500ms"));
        assertEquals(Duration.ofSeconds(45), Durations.parsePositive("t", " 45s "));
        assertEquals(Duration.ofMinutes(5), Durations.parsePositive("t", "5m"));
        assertEquals(Duration.ofHours(2), Durations.parsePositive("t", "2h"));
        assertEquals(Duration.ofDays(90), Durations.parsePositive("t", "90d"));
        assertEquals(Duration.ofSeconds(999_999_999_999L), Durations.parsePositive("t", "999999999999s"));
        for (String s : new String[] {"500ms", "45s", "5m", "2h", "90d"}) {
            assertEquals(s, Durations.format(Durations.parsePositive("t", s)));
        }
    }

    @Test
    void refusesAnythingElseNamingTheKey() {
        for (String bad : new String[] {
            null, "", "s", "45", "45 s", "-5s", "+5s", "4.5s", "45S", "45sec", "1000000000000s", "5m5s", "0x10s"
        }) {
            InvalidInputException e =
                    assertThrows(InvalidInputException.class, () -> Durations.parsePositive("store-timeout", bad));
            assertTrue(e.getMessage().startsWith("store-timeout must be"), e.getMessage());
        }
        InvalidInputException zero =
                assertThrows(InvalidInputException.class, () -> Durations.parsePositive("ttl", "0s"));
        assertEquals("ttl must be greater than zero; got '0s'", zero.getMessage());
    }

    @Test
    void aWindowPointIsAnInstantOrAnAgeWithinTheYearsEveryStoreCompares() {
        Instant now = Instant.parse("2026-12-03T12:00:00Z");
        assertEquals(
                Instant.parse("2026-11-29T14:00:00Z"), Durations.instantOrAge("since", "2026-11-29T14:00:00Z", now));
        assertEquals(now.minusSeconds(1800), Durations.instantOrAge("since", "30m", now));
        assertEquals(null, Durations.instantOrAge("since", null, now));
        for (String bad : new String[] {"+1000000000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "999999999999d"}) {
            InvalidInputException e =
                    assertThrows(InvalidInputException.class, () -> Durations.instantOrAge("until", bad, now));
            assertTrue(e.getMessage().startsWith("until must be"), e.getMessage());
        }
        InvalidInputException e =
                assertThrows(InvalidInputException.class, () -> Durations.instantOrAge("--since", "yesterday", now));
        assertTrue(e.getMessage().startsWith("--since must be an ISO-8601 instant"), e.getMessage());
    }
}
