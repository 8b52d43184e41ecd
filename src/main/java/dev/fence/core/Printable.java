package dev.fence.core;

/**
 * Makes untrusted text safe to put in a message: the hook's messages go back to the pusher's terminal
 * (and, on GitLab, into its web UI), and FENCED messages are read by language models as fence's own
 * words, so a name, path or option value chosen by someone else must never carry a raw control
 * character, line break or escape sequence into them, nor read as part of fence's sentences, nor run as
 * more than one word in a command fence tells its reader to run.
 *
 * <p>Stateless and thread-safe.
 */
public final class Printable {
    private Printable() {}

    /**
     * Returns {@code text} with every control, format or line-separator character (and backslash)
     * escaped as {@code \xNN} / {@code \\u{XXXX}} / {@code \\}, cut to at most {@code max} characters of
     * output followed by {@code …} when longer.
     */
    public static String escape(String text, int max) {
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

    /**
     * {@code name} as a message shows it: as it is when it is a plain name (letters, digits, marks and
     * {@code - _ . @ / : + = # ~ %}, nothing else), else in double quotes with {@code "} and {@code \\}
     * escaped and {@link #escape escaped} throughout, so that a name with spaces or punctuation reads as
     * one quoted value and never as a sentence of the message around it. A plain name that is a word fence's
     * messages address their reader with ({@code you}, {@code me}, {@code we}, … in any case) is quoted as
     * well: "superseded by 5 (held by you)" would tell the reader it holds the lease. So is a plain name
     * that mixes scripts the way look-alike names do, or whose every letter beyond ASCII is of another script
     * and draws as an ASCII one, with every character beyond ASCII shown by its code point: {@code
     * "m\\u{0430}in"} (a Cyrillic 'а') does not read as the branch {@code main}, nor a holder all in Cyrillic
     * look-alikes as an ASCII holder.
     */
    public static String name(String name) {
        if (name == null) {
            return "(none)";
        }
        if (isPlain(name) && !READER_WORDS.contains(name.toLowerCase(java.util.Locale.ROOT))) {
            if (isAscii(name)
                    || (Names.mixedScripts(name) == null && Names.WholeScriptLookAlikes.drawnAsAscii(name) == null)) {
                return name;
            }
            return '"' + codePointsBeyondAscii(name) + '"';
        }
        String escaped = escape(name, MAX_NAME_SHOWN);
        return '"' + escaped.replace("\"", "\\\"") + '"';
    }

    /** True when every character of {@code s} is ASCII. */
    static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    /** {@code plain} (a {@link #isPlain plain} name) with each character beyond ASCII as {@code \\u{XXXX}}. */
    private static String codePointsBeyondAscii(String plain) {
        StringBuilder out = new StringBuilder(plain.length() + 16);
        for (int i = 0; i < plain.length(); ) {
            if (out.length() >= MAX_NAME_SHOWN) {
                return out.append('…').toString();
            }
            int cp = plain.codePointAt(i);
            i += Character.charCount(cp);
            if (cp < 0x80) {
                out.append((char) cp);
            } else {
                out.append(String.format("\\u{%04X}", cp));
            }
        }
        return out.toString();
    }

    /** The words fence's messages use for their reader and for themselves, which a shown name must not read as. */
    private static final java.util.Set<String> READER_WORDS = java.util.Set.of(
            "you", "your", "yours", "yourself", "me", "my", "mine", "i", "we", "us", "our", "ours", "fence");

    /** Longest part of a name {@link #name} shows before {@code …}: a name is at most 512 characters. */
    private static final int MAX_NAME_SHOWN = 600;

    /**
     * True for a name made only of letters, digits, combining marks and {@code - _ . @ / : + = # ~ %}: one
     * that reads as a name in any sentence and as one word in a POSIX shell.
     */
    public static boolean isPlain(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); ) {
            int cp = name.codePointAt(i);
            i += Character.charCount(cp);
            if (!isPlainCharacter(cp)) {
                return false;
            }
        }
        return true;
    }

    /** True for a letter, digit or combining mark that shows, or one of {@code - _ . @ / : + = # ~ %}. */
    public static boolean isPlainCharacter(int cp) {
        if (cp < 0x80) {
            return (cp >= 'a' && cp <= 'z')
                    || (cp >= 'A' && cp <= 'Z')
                    || (cp >= '0' && cp <= '9')
                    || "-_.@/:+=#~%".indexOf(cp) >= 0;
        }
        int type = Character.getType(cp);
        return !isDefaultIgnorable(cp)
                && (Character.isLetterOrDigit(cp)
                        || type == Character.NON_SPACING_MARK
                        || type == Character.COMBINING_SPACING_MARK
                        || type == Character.ENCLOSING_MARK);
    }

    /**
     * {@code word} as one word of a POSIX shell command (sh, bash, zsh): as it is when {@link #isPlain}
     * and holds no {@code ~} and does not start with {@code #} or {@code =} (zsh expands a leading {@code
     * =}), else single-quoted ({@code '} written as {@code '\''}). Control and format characters are {@link #escape escaped} first, so the command stays on one
     * line and shows what it runs; such a word no longer names the original, which fence's own names
     * never contain (see {@link Names}).
     */
    public static String shellWord(String word) {
        if (word == null || word.isEmpty()) {
            return "''";
        }
        // bash expands ~ after = and : in any word that looks like an assignment (x=~, a=b:~/c).
        if (isPlain(word) && "~#=".indexOf(word.charAt(0)) < 0 && word.indexOf('~') < 0) {
            return word;
        }
        String shown = firstUnprintable(word) < 0 ? word : escape(word, Integer.MAX_VALUE);
        return "'" + shown.replace("'", "'\\''") + "'";
    }

    /**
     * The index of the first character of {@code text} that {@link #escape} would escape (a control, format,
     * line-separator, unassigned, surrogate or private-use character), or -1 when it prints as itself.
     */
    public static int firstUnprintable(String text) {
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            if (needsEscape(cp)) {
                return i;
            }
            i += Character.charCount(cp);
        }
        return -1;
    }

    /**
     * Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt) less what {@link Character#FORMAT}
     * already covers: characters a terminal or a browser shows as nothing, though some are letters (the
     * Hangul fillers) or marks (the combining grapheme joiner, variation selectors) to Java.
     */
    public static boolean isDefaultIgnorable(int cp) {
        return cp == 0x034F
                || cp == 0x115F
                || cp == 0x1160
                || (cp >= 0x17B4 && cp <= 0x17B5)
                || (cp >= 0x180B && cp <= 0x180F)
                || (cp >= 0x2060 && cp <= 0x206F)
                || cp == 0x3164
                || (cp >= 0xFE00 && cp <= 0xFE0F)
                || cp == 0xFFA0
                || (cp >= 0xFFF0 && cp <= 0xFFF8)
                || (cp >= 0x1BCA0 && cp <= 0x1BCA3)
                || (cp >= 0x1D173 && cp <= 0x1D17A)
                || (cp >= 0xE0000 && cp <= 0xE0FFF);
    }

    private static boolean needsEscape(int cp) {
        int type = Character.getType(cp);
        return Character.isISOControl(cp)
                || isDefaultIgnorable(cp)
                || (type == Character.SPACE_SEPARATOR && cp != ' ')
                || type == Character.FORMAT
                || type == Character.LINE_SEPARATOR
                || type == Character.PARAGRAPH_SEPARATOR
                || type == Character.UNASSIGNED
                || type == Character.SURROGATE
                || type == Character.PRIVATE_USE;
    }
}
