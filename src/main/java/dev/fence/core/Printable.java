package dev.fence.hook;

/**
 * Makes untrusted text safe to put in a message: the hook's messages go back to the pusher's terminal
 * (and, on GitLab, into its web UI), so a ref name or option value must never carry a raw control
 * character, line break or escape sequence into them.
 */
final class Printable {
    private Printable() {}

    /**
     * Returns {@code text} with every control, format or line-separator character (and backslash)
     * escaped as {@code \xNN} / {@code \\u{XXXX}} / {@code \\}, cut to at most {@code max} characters of
     * output followed by {@code …} when longer.
     */
    static String escape(String text, int max) {
        if (text == null) {
            return "(none)";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), max) + 8);
        for (int i = 0; i < text.length(); ) {
            if (out.length() >= max) {
                return out.append('…').toString();
            }
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == '\\') {
                out.append("\\\\");
            } else if (needsEscape(cp)) {
                out.append(cp < 0x100 ? String.format("\\x%02X", cp) : String.format("\\u{%04X}", cp));
            } else {
                out.appendCodePoint(cp);
            }
        }
        return out.toString();
    }

    private static boolean needsEscape(int cp) {
        int type = Character.getType(cp);
        return Character.isISOControl(cp)
                || type == Character.FORMAT
                || type == Character.LINE_SEPARATOR
                || type == Character.PARAGRAPH_SEPARATOR
                || type == Character.UNASSIGNED
                || type == Character.SURROGATE
                || type == Character.PRIVATE_USE;
    }
}
