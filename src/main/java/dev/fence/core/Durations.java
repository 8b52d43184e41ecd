package dev.fence.core;

import java.time.Duration;
import java.util.List;

/** Parses the durations users type: {@code 500ms}, {@code 45s}, {@code 5m}, {@code 2h}, {@code 90d}. */
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
