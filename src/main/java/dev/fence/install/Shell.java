package dev.fence.install;

import java.util.regex.Pattern;

/** Quoting for POSIX shell scripts the installer writes. */
final class Shell {
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");

    private Shell() {}

    /** {@code word} as one shell word: unchanged when it needs no quoting, else single-quoted. */
    static String quote(String word) {
        if (!word.isEmpty() && PLAIN.matcher(word).matches()) {
            return word;
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }
}
