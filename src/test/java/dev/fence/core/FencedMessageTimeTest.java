package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FencedMessageTimeTest {
    @Test
    void timeOfDayIsUtcToTheSecondAsAFormatterWritesIt() {
        DateTimeFormatter f = DateTimeFormatter.ofPattern("HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
        Random random = new Random(7);
        for (int i = 0; i < 10_000; i++) {
            Instant at = Instant.ofEpochMilli(random.nextLong() % 10_000_000_000_000L);
            assertEquals(f.format(at), FencedMessage.timeOfDay(at), at.toString());
        }
        assertEquals("00:00:00Z", FencedMessage.timeOfDay(Instant.EPOCH));
        assertEquals("23:59:59Z", FencedMessage.timeOfDay(Instant.ofEpochMilli(-1)));
    }
}
