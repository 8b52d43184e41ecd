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
 * <h2>Agreeing with git</h2>
 *
 * A positive answer must be one git would give too: the pushed objects are the pusher's to craft, and a
 * commit git reads differently from this class would be a fast-forward here and a rewrite to git (a
 * duplicated {@code tree} header once made git see a root commit where this class saw the old tip as
 * parent). So a commit is read only in git's canonical form, and anything else is "unknown":
 *
 * <ul>
 *   <li>the object header is exactly {@code commit <size>NUL}, the size in canonical decimal and equal to
 *       the content's length, and the zlib stream ends where the file does;
 *   <li>the content starts {@code tree <hex>\n} (once), followed by zero or more {@code parent <hex>\n},
 *       followed by {@code author }: git's {@code parse_commit_buffer} reads parents only from the lines
 *       right after the first tree line, so another order changes what git sees;
 *   <li>every id is lowercase hex of the length of the pushed ids (the repository's object format; git
 *       also reads uppercase, which is therefore left to git rather than rejected);
 *   <li>no later header line (up to the blank line that ends the headers) is a {@code tree} or {@code
 *       parent} line, and the headers hold no NUL byte.
 * </ul>
 *
 * And nothing is answered at all in a repository where git's view of parents is not the objects' own:
 * grafts ({@code info/grafts}, {@code GIT_GRAFT_FILE}), a shallow repository ({@code shallow}, {@code
 * GIT_SHALLOW_FILE}), or replace refs ({@code refs/replace/} loose or packed, or {@code
 * GIT_REPLACE_REF_BASE}), unless {@code GIT_NO_REPLACE_OBJECTS} turns those off. A commit-graph needs no
 * such care: git writes it from its own reading of the same objects (and turns it off where grafts or
 * replace refs apply), so for a canonical commit it names the same parents.
 *
 * <p>Object directories searched, as git would: {@code GIT_OBJECT_DIRECTORY} (the quarantine during
 * pre-receive) or {@code <git dir>/objects}, then {@code GIT_ALTERNATE_OBJECT_DIRECTORIES} (which holds
 * the repository's own objects during pre-receive). Thread-safe.
 */
final class LooseCommits {
    /** Most commits one question may read before giving up to git. */
    static final int MAX_COMMITS = 64;

    private static final int MAX_OBJECT_BYTES = 1 << 20;

    /** Most bytes of {@code packed-refs} searched for replace refs; a larger file is assumed to have some. */
    private static final int MAX_PACKED_REFS_BYTES = 16 << 20;

    private final List<Path> objectDirs;

    /** Where grafts, shallow and replace refs are looked for; empty when nothing need be checked. */
    private final List<Path> repoDirs;

    private final boolean envRewritesParents;

    /** Whether replace refs change what git reads (false when {@code GIT_NO_REPLACE_OBJECTS} is set). */
    private final boolean replaceRefsApply;

    /** Whether the repository's parents are the objects' own; null until first asked. Guarded by this. */
    private Boolean plainParents;

    LooseCommits(List<Path> objectDirs) {
        this(objectDirs, List.of(), false, true);
    }

    private LooseCommits(
            List<Path> objectDirs, List<Path> repoDirs, boolean envRewritesParents, boolean replaceRefsApply) {
        this.objectDirs = List.copyOf(objectDirs);
        this.repoDirs = List.copyOf(repoDirs);
        this.envRewritesParents = envRewritesParents;
        this.replaceRefsApply = replaceRefsApply;
    }

    /** The object directories a hook running with {@code env} in {@code gitDir} reads. */
    static LooseCommits of(Map<String, String> env, Path gitDir) {
        return of(env, gitDir, present(env, "GIT_NO_REPLACE_OBJECTS"));
    }

    /**
     * As {@link #of(Map, Path)}, with git's replacement of objects turned off when {@code noReplace}, as
     * {@code GIT_NO_REPLACE_OBJECTS} in {@code env} would.
     */
    static LooseCommits of(Map<String, String> env, Path gitDir, boolean noReplace) {
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
        boolean rewrites = present(env, "GIT_GRAFT_FILE")
                || present(env, "GIT_SHALLOW_FILE")
                || (!noReplace && present(env, "GIT_REPLACE_REF_BASE"));
        List<Path> repoDirs = new ArrayList<>();
        repoDirs.add(gitDir);
        Path common = commonDir(gitDir);
        if (common != null) {
            repoDirs.add(common);
        }
        return new LooseCommits(dirs, repoDirs, rewrites, !noReplace);
    }

    /**
     * True when {@code ancestor} is reachable from {@code descendant} through loose commits within
     * {@link #MAX_COMMITS}; false when that could not be seen (which says nothing either way).
     */
    boolean reaches(String ancestor, String descendant) {
        if (ancestor.equals(descendant)) {
            return true;
        }
        if (!parentsAreTheObjectsOwn()) {
            return false;
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

    /**
     * True unless the repository has grafts, is shallow, or has replace refs (or the environment names
     * such files): then git's parents may differ from the objects', and nothing is answered here.
     */
    synchronized boolean parentsAreTheObjectsOwn() {
        if (plainParents == null) {
            plainParents = !envRewritesParents && !rewritesParents();
        }
        return plainParents;
    }

    private boolean rewritesParents() {
        for (Path dir : repoDirs) {
            if (SmallFiles.exists(dir.resolve("info").resolve("grafts")) || SmallFiles.exists(dir.resolve("shallow"))) {
                return true;
            }
            if (replaceRefsApply && hasReplaceRefs(dir)) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasReplaceRefs(Path dir) {
        String[] loose = dir.resolve("refs").resolve("replace").toFile().list();
        if (loose != null && loose.length > 0) {
            return true;
        }
        try {
            byte[] packed = SmallFiles.readIfExists(dir.resolve("packed-refs"), MAX_PACKED_REFS_BYTES);
            if (packed == null) {
                return SmallFiles.exists(dir.resolve("packed-refs"));
            }
            return indexOf(packed, REPLACE_PREFIX, 0) >= 0;
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    private static final byte[] REPLACE_PREFIX = " refs/replace/".getBytes(StandardCharsets.US_ASCII);

    /**
     * The parents of loose commit {@code id} as git reads them, or null when it is not a loose commit in
     * git's canonical form (see the class comment), or cannot be read.
     */
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
        if (nul < 0 || !canonicalHeader(body, nul)) {
            return null;
        }
        int hexLength = id.length();
        int pos = nul + 1;
        pos = idLine(body, pos, TREE, hexLength);
        if (pos < 0) {
            return null;
        }
        List<String> parents = new ArrayList<>(2);
        while (startsWith(body, pos, PARENT)) {
            int next = idLine(body, pos, PARENT, hexLength);
            if (next < 0) {
                return null;
            }
            parents.add(new String(body, pos + PARENT.length, hexLength, StandardCharsets.US_ASCII));
            pos = next;
        }
        if (!startsWith(body, pos, AUTHOR)) {
            return null;
        }
        // The remaining headers, up to the blank line: none may be read as a tree or parent by any reader,
        // and none may hold a NUL.
        while (pos < body.length && body[pos] != '\n') {
            if (startsWith(body, pos, TREE) || startsWith(body, pos, PARENT)) {
                return null;
            }
            int end = indexOf(body, (byte) '\n', pos);
            int stop = end < 0 ? body.length : end;
            for (int i = pos; i < stop; i++) {
                if (body[i] == 0) {
                    return null;
                }
            }
            pos = end < 0 ? body.length : end + 1;
        }
        return parents;
    }

    private static final byte[] TREE = "tree ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PARENT = "parent ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] AUTHOR = "author ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] COMMIT = "commit ".getBytes(StandardCharsets.US_ASCII);

    /** True for {@code commit <size>} before {@code nul}, the size canonical and equal to what follows. */
    private static boolean canonicalHeader(byte[] body, int nul) {
        if (!startsWith(body, 0, COMMIT)) {
            return false;
        }
        int digits = nul - COMMIT.length;
        if (digits < 1 || digits > 9 || (digits > 1 && body[COMMIT.length] == '0')) {
            return false;
        }
        long size = 0;
        for (int i = COMMIT.length; i < nul; i++) {
            byte b = body[i];
            if (b < '0' || b > '9') {
                return false;
            }
            size = size * 10 + (b - '0');
        }
        return size == body.length - nul - 1;
    }

    /**
     * Reads {@code <keyword><hex>\n} at {@code pos}: returns the position after it, or -1 when the line is
     * not exactly that (lowercase hex of {@code hexLength} digits, then a newline).
     */
    private static int idLine(byte[] body, int pos, byte[] keyword, int hexLength) {
        if (!startsWith(body, pos, keyword)) {
            return -1;
        }
        int hex = pos + keyword.length;
        int newline = hex + hexLength;
        if (newline >= body.length || body[newline] != '\n') {
            return -1;
        }
        for (int i = hex; i < newline; i++) {
            byte c = body[i];
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return -1;
            }
        }
        return newline + 1;
    }

    private static boolean startsWith(byte[] b, int pos, byte[] prefix) {
        if (pos < 0 || pos + prefix.length > b.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (b[pos + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static boolean present(Map<String, String> env, String name) {
        String v = env.get(name);
        return v != null && !v.isEmpty();
    }

    /** The common directory of a linked worktree's git directory ({@code commondir}), or null. */
    private static Path commonDir(Path gitDir) {
        try {
            byte[] b = SmallFiles.readIfExists(gitDir.resolve("commondir"), 4096);
            if (b == null) {
                return null;
            }
            String s = new String(b, StandardCharsets.UTF_8).strip();
            return s.isEmpty() ? null : gitDir.resolve(s).normalize();
        } catch (IOException | RuntimeException e) {
            return null;
        }
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
            if (inflater.getRemaining() != 0) {
                return null; // bytes after the zlib stream: git calls such a loose object corrupt
            }
            return java.util.Arrays.copyOf(out, n);
        } catch (DataFormatException e) {
            return null;
        } finally {
            inflater.end();
        }
    }

    private static int indexOf(byte[] b, byte[] pattern, int from) {
        for (int i = from; i + pattern.length <= b.length; i++) {
            if (startsWith(b, i, pattern)) {
                return i;
            }
        }
        return -1;
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
