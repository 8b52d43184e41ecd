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
