package dev.fence.git;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * Whether this JVM hands names beyond ASCII to git and to the file system as the UTF-8 bytes git's refs and
 * files are named by. The JVM encodes file names in its locale's character set ({@code native.encoding})
 * and, on JDK 17, process arguments in its default one: in {@code LANG=C} {@code refs/heads/café} would reach
 * git as {@code refs/heads/caf?}, another ref, and a Latin-1 locale writes {@code é} as one byte where git's
 * name has two. Only a JVM started in a UTF-8 locale names them as git does.
 */
public final class JvmCharset {
    private JvmCharset() {}

    /** True when {@code name} reaches git and the file system unchanged: it is ASCII, or this JVM is UTF-8. */
    public static boolean carries(String name) {
        return isAscii(name) || Utf8.JVM;
    }

    /** True when this JVM names files and process arguments in UTF-8. */
    public static boolean utf8() {
        return Utf8.JVM;
    }

    /** True when every character of {@code s} is ASCII. */
    public static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    /**
     * Why {@code name}, as this JVM read it from the operating system (its arguments, a directory listing),
     * may not be the text it stands for, or null when it is. The JVM decodes such names in its locale's
     * character set and puts U+FFFD for each byte that set has no character for ({@code café} in {@code
     * LANG=C} reads as {@code caf} and two of them); a Latin-1 locale reads the same UTF-8 bytes as {@code
     * cafÃ©}, with nothing to show it. So a JVM that is not UTF-8 takes such names in ASCII only, and any JVM
     * refuses bytes it could not read.
     */
    public static String misread(String name) {
        if (name.indexOf('\uFFFD') >= 0) {
            return "it has bytes this process could not read as text (each shows as U+FFFD): fence reads names as"
                    + " UTF-8, and " + (utf8() ? "these bytes are not UTF-8; write the name in UTF-8" : remedy());
        }
        if (!carries(name)) {
            return "it goes beyond ASCII, which this process cannot read or pass on as the UTF-8 fence and git"
                    + " name things by: " + remedy();
        }
        return null;
    }

    /** What to tell the operator of a JVM that cannot carry a name (the remedy, without the name). */
    public static String remedy() {
        return "the locale this fence was started in (LC_ALL, LC_CTYPE, LANG) is not a UTF-8 one; run it in a"
                + " UTF-8 locale such as C.UTF-8";
    }

    /**
     * Asked once, and only when a name beyond ASCII comes (a holder class: a hook's push of ASCII names, nearly
     * all of them, never looks up a charset).
     */
    private static final class Utf8 {
        static final boolean JVM = isUtf8(System.getProperty("native.encoding"))
                && isUtf8(Charset.defaultCharset().name());
    }

    private static boolean isUtf8(String charset) {
        if (charset == null) {
            return false;
        }
        try {
            return Charset.forName(charset).equals(StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
