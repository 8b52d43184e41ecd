package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/** Parses {@code --since} (and {@code --until}): an ISO-8601 instant, or an age such as {@code 30m} counted back from now. */
final class Since {
    private Since() {}

    static Instant parse(String text, Clock clock) {
        return parse("--since", text, clock);
    }

    /** Parses {@code option}'s value ({@code --since}, {@code --until}) the same way. */
    static Instant parse(String option, String text, Clock clock) {
        if (text == null) {
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            try {
                return clock.instant().minus(Durations.parsePositive(option, text));
            } catch (InvalidInputException notAnAge) {
                throw new InvalidInputException(
                        option + " must be an ISO-8601 instant (2026-11-29T14:00:00Z) or an age (30m, 2h, 7d); got '"
                                + text + "'");
            }
        }
    }
}
