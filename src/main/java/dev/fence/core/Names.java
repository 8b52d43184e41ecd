package dev.fence.core;

/**
 * Validation of the names users give fence: resources, holders, repo ids and pushers.
 *
 * <p>A name is 1 to {@value #MAX_LENGTH} characters long and contains no control characters (so it
 * can never split a log line, a FENCED line or a ledger row), no unpaired surrogates (which no store can
 * write as themselves) and no whitespace at either end.
 */
public final class Names {
    /** Longest accepted name, in characters. */
    public static final int MAX_LENGTH = 512;

    private Names() {}

    /**
     * Returns {@code value} when it is a valid name.
     *
     * @param what what the name is, for the message ("resource", "holder")
     * @throws InvalidInputException naming the problem when it is not
     */
    public static String require(String what, String value) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException(what + " must not be empty");
        }
        if (value.length() > MAX_LENGTH) {
            throw new InvalidInputException(
                    what + " is " + value.length() + " characters long; the limit is " + MAX_LENGTH);
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                throw new InvalidInputException(what + " contains a control character (U+"
                        + String.format("%04X", (int) c) + ") at position " + i);
            }
            // A lone surrogate (JSON's "\ud800") is no character: every store writes it as '?', so two
            // names that differ only there would be one lock and one ledger name.
            if (Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new InvalidInputException(what + " contains an unpaired surrogate (U+"
                        + String.format("%04X", (int) c) + ") at position " + i + ", which is not a character");
            }
        }
        if (Character.isWhitespace(value.charAt(0)) || Character.isWhitespace(value.charAt(value.length() - 1))) {
            throw new InvalidInputException(what + " must not start or end with whitespace: '" + value + "'");
        }
        return value;
    }
}
