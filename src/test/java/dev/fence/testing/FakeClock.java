package dev.fence.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that moves only when told to. Thread-safe. */
public final class FakeClock extends Clock {
    private volatile Instant now;
    private final ZoneId zone;

    public FakeClock(Instant start) {
        this(start, ZoneOffset.UTC);
    }

    private FakeClock(Instant start, ZoneId zone) {
        this.now = start;
        this.zone = zone;
    }

    /** Moves the clock forward (or, with a negative duration, back) and returns the new instant. */
    public synchronized Instant advance(Duration by) {
        now = now.plus(by);
        return now;
    }

    /** Sets the clock to {@code instant}. */
    public void set(Instant instant) {
        now = instant;
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    /** A clock with another zone that shares nothing with this one but the current instant. */
    @Override
    public Clock withZone(ZoneId newZone) {
        return new FakeClock(now, newZone);
    }
}
