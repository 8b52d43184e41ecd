package dev.fence.hook;

import dev.fence.core.Printable;
import dev.fence.core.RefUpdate;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether this JVM can hand a pushed ref's name to the file system (a loose ref, a symbolic ref, a
 * directory along it) and to git as an argument. Git's ref names are bytes, which fence reads as UTF-8; the
 * JVM encodes file names in its locale's character set ({@code native.encoding}) and, on JDK 17, process
 * arguments in its default one. In {@code LANG=C} neither can carry {@code refs/heads/café}: a file name
 * fails outright, and an argument would reach git as {@code refs/heads/caf?}, another name. A Latin-1
 * locale can carry it, as other bytes than git's: only UTF-8 names git's files. A hook that cannot name
 * a ref cannot judge it (its symbolic refs and other spellings are files), so such a push is refused
 * whole with a message for the operator; hooks that {@code fence install} writes start the JVM in a
 * UTF-8 locale.
 */
final class HostCharset {
    private HostCharset() {}

    /** The first of {@code updates}' refs this JVM cannot name, or null when it can name them all. */
    static String unnameable(List<RefUpdate> updates) {
        for (RefUpdate u : updates) {
            if (!canName(u.ref())) {
                return u.ref();
            }
        }
        return null;
    }

    /** True when {@code ref} can be a file name and a process argument in this JVM without change. */
    static boolean canName(String ref) {
        if (isAscii(ref)) {
            return true;
        }
        if (!Utf8.JVM) {
            return false;
        }
        try {
            Path.of(ref);
        } catch (InvalidPathException e) {
            return false;
        }
        return true;
    }

    /**
     * Whether this JVM names files and arguments in UTF-8, asked once and only when a name beyond ASCII
     * comes (a holder class: a push of ASCII names, nearly all of them, never looks up a charset). A
     * character set that can encode a name is not enough: Latin-1 writes 'é' as one byte where git's file
     * is named by two, so a symbolic ref's file would not be found and the ref judged as plain.
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

    /** What the operator is told about {@code ref}, which {@link #canName} refused. */
    static String problem(String ref) {
        return "this hook's JVM cannot name ref '" + Printable.escape(ref, 200)
                + "' as a file or a git argument: the locale it was started in (LC_ALL, LC_CTYPE, LANG) is not"
                + " a UTF-8 one; start git's hooks in a UTF-8 locale such as C.UTF-8"
                + " (hooks that 'fence install' writes switch to C.UTF-8, which this host may lack)";
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }
}
