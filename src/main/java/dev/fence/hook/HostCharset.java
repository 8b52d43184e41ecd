package dev.fence.hook;

import dev.fence.core.Printable;
import dev.fence.core.RefUpdate;
import dev.fence.git.JvmCharset;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether this JVM can hand a pushed ref's name to the file system (a loose ref, a symbolic ref, a
 * directory along it) and to git as an argument ({@link JvmCharset}: only a JVM in a UTF-8 locale names
 * them as git does). A hook that cannot name a ref cannot judge it (its symbolic refs and other spellings
 * are files), so such a push is refused whole with a message for the operator; hooks that {@code fence
 * install} writes start the JVM in a UTF-8 locale.
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
        if (JvmCharset.isAscii(ref)) {
            return true;
        }
        if (!JvmCharset.utf8()) {
            return false;
        }
        try {
            Path.of(ref);
        } catch (InvalidPathException e) {
            return false;
        }
        return true;
    }

    /** What the operator is told about {@code ref}, which {@link #canName} refused. */
    static String problem(String ref) {
        return "this hook's JVM cannot name ref '" + Printable.escape(ref, 200)
                + "' as a file or a git argument: the locale it was started in (LC_ALL, LC_CTYPE, LANG) is not"
                + " a UTF-8 one; start git's hooks in a UTF-8 locale such as C.UTF-8"
                + " (hooks that 'fence install' writes switch to C.UTF-8, which this host may lack)";
    }
}
