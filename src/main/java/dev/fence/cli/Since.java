package dev.fence.cli;

import dev.fence.core.Durations;
import java.time.Clock;
import java.time.Instant;

/** Parses {@code --since} (and {@code --until}): an ISO-8601 instant, or an age such as {@code 30m} counted back from now. */
final class Since {
    private Since() {}

    static Instant parse(String text, Clock clock) {
        return parse("--since", text, clock);
    }

    /** Parses {@code option}'s value ({@code --since}, {@code --until}) the same way. */
    static Instant parse(String option, String text, Clock clock) {
        return Durations.instantOrAge(option, text, clock.instant());
    }
}
