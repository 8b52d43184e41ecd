package dev.fence.core;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;

/**
 * Parses the durations users type: {@code 500ms}, {@code 45s}, {@code 5m}, {@code 2h}, {@code 90d}; and the
 * points in time of a ledger window, an instant or an age.
 */
public final class Durations {
    private static final List<String> UNITS = List.of("ms", "s", "m", "h", "d");

    private Durations() {}

    /**
     * Parses a positive duration.
     *
     * @param what the option or key being parsed, for the message
     * @throws InvalidInputException when the text is not a positive whole number with a unit
     */
    public static Duration parsePositive(String what, String text) {
        String t = text == null ? "" : text.trim();
        int digits = 0;
        while (digits < t.length() && t.charAt(digits) >= '0' && t.charAt(digits) <= '9') {
            digits++;
        }
        String unit = t.substring(digits);
        if (digits == 0 || digits > 12 || !UNITS.contains(unit)) {
            throw new InvalidInputException(
                    what + " must be a positive whole number with a unit (ms, s, m, h, d), e.g. 45s or 5m; got '" + text
                            + "'");
        }
        long n = Long.parseLong(t.substring(0, digits));
        if (n == 0) {
            throw new InvalidInputException(what + " must be greater than zero; got '" + text + "'");
        }
        return switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }

    /** The earliest and latest instants a window may name: what every store can compare in milliseconds. */
    private static final Instant EARLIEST = Instant.parse("0000-01-01T00:00:00Z");

    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    /**
     * Parses the start or end of a ledger window ({@code --since}, {@code until=}): an ISO-8601 instant
     * ({@code 2026-11-29T14:00:00Z}) or an age counted back from {@code now} ({@code 30m}, {@code 7d}).
     * Null for null.
     *
     * @param what the option or parameter, for the message
     * @throws InvalidInputException for anything else, and for a point before year 0 or after year 9999
     */
    public static Instant instantOrAge(String what, String text, Instant now) {
        if (text == null) {
            return null;
        }
        Instant at;
        try {
            at = Instant.parse(text);
        } catch (DateTimeParseException e) {
            try {
                at = now.minus(parsePositive(what, text));
            } catch (InvalidInputException | DateTimeException | ArithmeticException notAnAge) {
                throw new InvalidInputException(what
                        + " must be an ISO-8601 instant (2026-11-29T14:00:00Z) or an age (30m, 2h, 7d); got '" + text
                        + "'");
            }
        }
        if (at.isBefore(EARLIEST) || at.isAfter(LATEST)) {
            throw new InvalidInputException(what + " must be between the years 0 and 9999; got '" + text + "'");
        }
        return at;
    }

    /** Formats a duration the way {@link #parsePositive} reads it, choosing the largest exact unit. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 86_400_000L == 0) {
            return ms / 86_400_000L + "d";
        } else if (ms % 3_600_000L == 0) {
            return ms / 3_600_000L + "h";
        } else if (ms % 60_000L == 0) {
            return ms / 60_000L + "m";
        } else if (ms % 1000L == 0) {
            return ms / 1000L + "s";
        }
        return ms + "ms";
    }
}
