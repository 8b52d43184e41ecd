package dev.fence.hookpath;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The system clock in UTC at millisecond precision, the precision both stores keep: {@link
 * Clock#systemUTC()} without initialising {@code java.time}'s zone classes until something asks for the
 * zone. The clock seam of the hook path: on JDK 25 that initialisation costs a hook process about a
 * millisecond of its start, and a hook only reads instants (bench: "Java hook, SQLite|Redis, JDK 25").
 *
 * <p>Wall-clock time, as {@link Clock#systemUTC()}: it may step backwards when the system clock is set.
 * Thread-safe and stateless.
 */
public final class UtcMillisClock extends Clock {
    /** The clock. */
    public static final UtcMillisClock INSTANCE = new UtcMillisClock();

    private UtcMillisClock() {}

    /** UTC; the first call initialises the zone classes this clock otherwise spares. */
    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return zone.equals(ZoneOffset.UTC) ? this : Clock.system(zone);
    }

    @Override
    public long millis() {
        return System.currentTimeMillis();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(System.currentTimeMillis());
    }

    @Override
    public String toString() {
        return "UtcMillisClock";
    }
}
