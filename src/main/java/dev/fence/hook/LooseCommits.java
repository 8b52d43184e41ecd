package dev.fence.hook;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Answers "is A in B's history?" from loose commit objects alone, when it can: the commits of a small
 * push arrive as loose objects (git unpacks pushes below {@code receive.unpackLimit}, 100 objects by
 * default) in the pre-receive quarantine, so a fast-forward's new tip usually names the old tip as its
 * parent in a file this class can read in microseconds, where starting {@code git merge-base} costs a
 * process. Only a positive answer is given: anything this class cannot see (a packed object, a long
 * walk, a damaged file) is "unknown", and the caller asks git.
 *
 * <p>Object directories searched, as git would: {@code GIT_OBJECT_DIRECTORY} (the quarantine during
 * pre-receive) or {@code <git dir>/objects}, then {@code GIT_ALTERNATE_OBJECT_DIRECTORIES} (which holds
 * the repository's own objects during pre-receive). Thread-safe.
 */
final class LooseCommits {
    /** Most commits one question may read before giving up to git. */
    static final int MAX_COMMITS = 64;

    private static final int MAX_OBJECT_BYTES = 1 << 20;

    private final List<Path> objectDirs;

    LooseCommits(List<Path> objectDirs) {
        this.objectDirs = List.copyOf(objectDirs);
    }

    /** The object directories a hook running with {@code env} in {@code gitDir} reads. */
    static LooseCommits of(Map<String, String> env, Path gitDir) {
        List<Path> dirs = new ArrayList<>();
        String primary = env.get("GIT_OBJECT_DIRECTORY");
        if (primary != null && !primary.isEmpty()) {
            dirs.add(gitDir.resolve(primary));
        } else {
            dirs.add(gitDir.resolve("objects"));
        }
        String alternates = env.get("GIT_ALTERNATE_OBJECT_DIRECTORIES");
        if (alternates != null && !alternates.isEmpty()) {
            for (String a : alternates.split(":")) {
                if (!a.isEmpty() && !a.startsWith("\"")) {
                    dirs.add(gitDir.resolve(a));
                }
            }
        }
        return new LooseCommits(dirs);
    }

    /**
     * True when {@code ancestor} is reachable from {@code descendant} through loose commits within
     * {@link #MAX_COMMITS}; false when that could not be seen (which says nothing either way).
     */
    boolean reaches(String ancestor, String descendant) {
        if (ancestor.equals(descendant)) {
            return true;
        }
        Deque<String> todo = new ArrayDeque<>();
        Set<String> seen = new HashSet<>();
        todo.add(descendant);
        seen.add(descendant);
        int read = 0;
        while (!todo.isEmpty()) {
            if (++read > MAX_COMMITS) {
                return false;
            }
            List<String> parents = parents(todo.poll());
            if (parents == null) {
                return false;
            }
            for (String p : parents) {
                if (p.equals(ancestor)) {
                    return true;
                }
                if (seen.add(p)) {
                    todo.add(p);
                }
            }
        }
        return false;
    }

    /** The parents of loose commit {@code id}, or null when it is not a loose commit this class can read. */
    List<String> parents(String id) {
        byte[] raw = read(id);
        if (raw == null) {
            return null;
        }
        byte[] body = inflate(raw);
        if (body == null) {
            return null;
        }
        int nul = indexOf(body, (byte) 0, 0);
        if (nul < 0 || !new String(body, 0, nul, StandardCharsets.US_ASCII).startsWith("commit ")) {
            return null;
        }
        List<String> parents = new ArrayList<>(2);
        int line = nul + 1;
        while (line < body.length) {
            int end = indexOf(body, (byte) '\n', line);
            if (end < 0 || end == line) {
                break; // the end of the headers
            }
            String header = new String(body, line, end - line, StandardCharsets.US_ASCII);
            if (header.startsWith("parent ")) {
                String p = header.substring("parent ".length());
                if (!isHex(p, id.length())) {
                    return null;
                }
                parents.add(p);
            } else if (!header.startsWith("tree ")) {
                break; // parents come right after the tree
            }
            line = end + 1;
        }
        return parents;
    }

    private byte[] read(String id) {
        if (!isHex(id, id.length()) || (id.length() != 40 && id.length() != 64)) {
            return null;
        }
        String name = id.substring(0, 2) + "/" + id.substring(2);
        for (Path dir : objectDirs) {
            Path file = dir.resolve(name);
            try {
                if (SmallFiles.exists(file)) {
                    return SmallFiles.readIfExists(file, MAX_OBJECT_BYTES);
                }
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }

    /** The object's header and as much of its content as holds the commit headers. */
    private static byte[] inflate(byte[] raw) {
        Inflater inflater = new Inflater();
        try {
            inflater.setInput(raw);
            byte[] out = new byte[Math.max(512, raw.length * 4)];
            int n = 0;
            while (!inflater.finished()) {
                if (n == out.length) {
                    if (out.length >= MAX_OBJECT_BYTES) {
                        return null;
                    }
                    out = java.util.Arrays.copyOf(out, out.length * 2);
                }
                int got = inflater.inflate(out, n, out.length - n);
                if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    return null;
                }
                n += got;
            }
            return java.util.Arrays.copyOf(out, n);
        } catch (DataFormatException e) {
            return null;
        } finally {
            inflater.end();
        }
    }

    private static int indexOf(byte[] b, byte value, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] == value) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isHex(String s, int length) {
        if (s.length() != length) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }
}
