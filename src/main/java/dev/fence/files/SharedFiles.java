package dev.fence.files;

import dev.fence.core.Fenced;
import dev.fence.core.FencedWrites;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Printable;
import dev.fence.core.Reason;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The shared-file compare-and-swap: {@code fence read} and {@code fence write} as a library.
 *
 * <p>A write names the sha256 of the file as the writer last read it ({@link #MISSING} for a file that did
 * not exist). Under the file's lock, it is refused (FENCED, {@code file-changed}) when the file's sha256 is
 * another, then judged by the lease store ({@link FencedWrites#admit}, the hook's token rule: a stale token
 * is FENCED), and only then made: the content goes to a temporary file in the same directory, which is
 * synced, renamed over the file and followed by a sync of the directory. A crash at any point leaves the old
 * file or the new one, never a torn one (and at worst a {@code .*.fence-tmp} file beside it).
 *
 * <p>The lock is a lock file beside the target, {@code .<name>.fence-lock}, held with an OS file lock
 * ({@link FileChannel#lock()}, {@code fcntl} on Linux) from the hash check to the rename, so of two
 * writers from the same hash, in one process or many, exactly one succeeds and the other sees the new hash.
 * The lock file is left in place: deleting it would let a third writer lock a new file while a second
 * holds the old one. Writers that do not go through fence take no lock.
 *
 * <p>Paths are confined to a root: a path whose directory resolves (symbolic links followed) outside it is
 * refused, and so is a path that is itself a symbolic link or is named like fence's own lock or temporary
 * file. The path is checked once; the file, its lock file and its temporary file are then read, created and
 * renamed in its directory as opened from the root ({@code ConfinedDirectory}), not by path, so that a
 * directory on the way swapped for a symbolic link after the check leads nowhere outside the root (and not
 * into a git directory): where the JDK gives a {@link java.nio.file.SecureDirectoryStream} (Linux) the
 * directory is reached one name at a time without following links and used by handle; elsewhere its real
 * path is checked again before each step. A directory found moved or replaced fails the read or write with
 * an {@link InvalidInputException}, and nothing is written. Thread-safe.
 */
public final class SharedFiles {
    /** The expected sha256 of a file that does not exist: 64 zeros (no content hashes to it). */
    public static final String MISSING = "0".repeat(64);

    /**
     * The most {@link #read} returns and {@link #write} writes: 16 MiB. Shared files are what an agent reads
     * whole, and far less fills a model's context; the MCP server sends the content twice (text and
     * structured), JSON-escaped, which at this size still fits a default JVM heap.
     */
    public static final int MAX_CONTENT = 16 << 20;

    /** The most a lock file holds: one resource name. */
    private static final int MAX_LOCK_FILE = 4096;

    private static final ConcurrentHashMap<Path, ReentrantLock> IN_PROCESS = new ConcurrentHashMap<>();
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    private final FencedWrites writes;
    private final Seam seam;

    /** Points in a read or a write where a test may step in; the real reader and writer have none. */
    public interface Seam {
        /** After the path is confined to the root, before anything in its directory is opened. */
        default void afterConfine(Path target) {}

        /** After the hash check, before the lease store judges the token (a round trip to the store). */
        default void beforeAdmit(Path target) {}

        /** After the temporary file is written and synced, before it is renamed over the target. */
        default void beforeRename(Path temp, Path target) {}
    }

    private static final Seam NONE = new Seam() {};

    public SharedFiles(FencedWrites writes) {
        this(writes, NONE);
    }

    public SharedFiles(FencedWrites writes, Seam seam) {
        this.writes = writes;
        this.seam = seam;
    }

    /**
     * A file as read.
     *
     * @param path the file (its directory's real path)
     * @param sha256 the sha256 of its content in lower-case hex, or {@link #MISSING}
     * @param content its bytes, or null when it does not exist
     */
    public record Content(Path path, String sha256, byte[] content) {
        public boolean exists() {
            return content != null;
        }
    }

    /**
     * A write.
     *
     * @param root the directory writes are confined to
     * @param path the file, absolute or relative to the caller's working directory
     * @param label the path as the user named it, for the re-read command
     * @param expectedSha256 the sha256 the writer read, or {@link #MISSING}
     * @param content the new content
     * @param proof the grant's proof, or null (then FENCED)
     * @param pinned {@code root} as {@link Root#pin pinned} when a long-running server started, or null to
     *     take it as it is now
     */
    public record Request(
            Path root,
            Path path,
            String label,
            String expectedSha256,
            byte[] content,
            String resource,
            String holder,
            long token,
            String proof,
            Root pinned) {
        /** A write confined to {@code root} as it is at the time of the write. */
        public Request(
                Path root,
                Path path,
                String label,
                String expectedSha256,
                byte[] content,
                String resource,
                String holder,
                long token,
                String proof) {
            this(root, path, label, expectedSha256, content, resource, holder, token, proof, null);
        }

        @Override
        public String toString() {
            return "Request[path=" + path + ", expected=" + expectedSha256 + ", resource=" + resource + ", holder="
                    + holder + ", token=" + token + ", proof=(hidden)]";
        }
    }

    /** What a write did. Exit codes: {@code Written} 0, {@code Refused} 3. */
    public sealed interface Outcome {
        /** The file now holds the new content. */
        record Written(Path path, String oldSha256, String newSha256) implements Outcome {}

        /** FENCED: the file changed since it was read, or the token may not write; nothing was written. */
        record Refused(Fenced fenced, String reread) implements Outcome {}
    }

    /**
     * Reads {@code path} (confined to {@code root}).
     *
     * @throws InvalidInputException for a path outside the root, a symbolic link, a directory, fence's own
     *     lock or temporary file, or an unreadable file
     */
    public static Content read(Path root, Path path) {
        return read(Root.pin(root), path, NONE);
    }

    /** As {@link #read(Path, Path)}, under a root {@link Root#pin pinned} when a long-running server started. */
    public static Content read(Root root, Path path) {
        return read(root, path, NONE);
    }

    static Content read(Path root, Path path, Seam seam) {
        return read(Root.pin(root), path, seam);
    }

    static Content read(Root root, Path path, Seam seam) {
        Confined c = confine(root, path);
        Path target = c.target();
        seam.afterConfine(target);
        String name = target.getFileName().toString();
        try (ConfinedDirectory dir = ConfinedDirectory.open(c.rootReal(), c.rootKey(), target.getParent())) {
            byte[] bytes;
            try (SeekableByteChannel in = openRegular(dir, name)) {
                // The size first, to refuse without reading; then at most one byte more than the limit, as the
                // file may grow meanwhile. Either way never more than MAX_CONTENT + 1 bytes in memory.
                long size = in.size();
                bytes = size > MAX_CONTENT ? null : Channels.newInputStream(in).readNBytes(MAX_CONTENT + 1);
                if (bytes == null || bytes.length > MAX_CONTENT) {
                    throw new InvalidInputException("--path " + path + " is more than the 16 MiB (" + MAX_CONTENT
                            + " bytes) fence reads and writes"
                            + (size > MAX_CONTENT ? " (it is " + size + " bytes)" : "")
                            + "; shared files are ones an agent reads whole");
                }
            } catch (NoSuchFileException e) {
                bytes = null;
            }
            // Read in the directory opened, under the root; but if it is no longer at the path named, what
            // was read (or found missing) is not the file at that path.
            dir.checkStillAtItsPath("nothing was read");
            return bytes == null ? new Content(target, MISSING, null) : new Content(target, sha256(bytes), bytes);
        } catch (IOException e) {
            throw new InvalidInputException("cannot read " + target + ": " + e.getMessage());
        }
    }

    /**
     * Writes {@code r} if the file's hash is still the expected one and the token may write.
     *
     * @throws InvalidInputException for a malformed hash, a path outside the root, a symbolic link, fence's
     *     own lock or temporary file, or a file or directory that cannot be written; nothing was written
     * @throws dev.fence.core.StoreUnavailableException when the lease store cannot be reached
     */
    public Outcome write(Request r) {
        String expected = normaliseSha(r.expectedSha256());
        if (r.content().length > MAX_CONTENT) {
            throw new InvalidInputException("the new content of " + r.label() + " is more than the 16 MiB ("
                    + MAX_CONTENT + " bytes) fence reads and writes; nothing was written");
        }
        Confined c = confine(r.pinned() != null ? r.pinned() : Root.pin(r.root()), r.path());
        Path target = c.target();
        seam.afterConfine(target);
        String name = target.getFileName().toString();
        String reread = "fence read --path " + Printable.shellWord(r.label());
        FencedWrites.Attempt attempt = new FencedWrites.Attempt(
                r.resource(), r.holder(), r.token(), r.proof(), "write " + target + " expecting sha256 " + expected);
        String lockName = "." + name + ".fence-lock";
        Path lockPath = target.resolveSibling(lockName);
        ConfinedDirectory dir;
        Object before;
        try {
            dir = ConfinedDirectory.open(c.rootReal(), c.rootKey(), target.getParent());
        } catch (IOException e) {
            throw new InvalidInputException("cannot write " + target + ": " + e.getMessage());
        }
        try {
            before = checkLockFile(dir, lockName);
        } catch (IOException | RuntimeException e) {
            closeQuietly(dir);
            throw e instanceof IOException
                    ? new InvalidInputException("cannot write " + target + ": " + e.getMessage())
                    : (RuntimeException) e;
        }
        ReentrantLock local = IN_PROCESS.computeIfAbsent(target, k -> new ReentrantLock());
        local.lock();
        // The directory's handle, not its path: a directory on the way swapped meanwhile changes nothing.
        // NOFOLLOW_LINKS as well: a link put there after the check is refused by openat(2) itself (O_NOFOLLOW).
        try (dir;
                FileChannel lockFile = dir.open(
                        lockName,
                        Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE));
                FileLock held = lockFile.lock()) {
            // Java cannot stat an open channel, so the name is checked again now that it is open and locked:
            // the same file as before the open, still one regular file with one name. (A new lock file was
            // created by this open, O_CREAT without following links.) A name swapped for a hard link and back
            // between the two checks would escape them; then at most an empty or blank file gets the resource
            // name, as lockOwner refuses to overwrite anything else.
            Object after = checkLockFile(dir, lockName);
            if (after == null || (before != null && !before.equals(after))) {
                throw new InvalidInputException("the lock file " + lockPath + " was removed or replaced while fence"
                        + " opened it; nothing was written. Try again");
            }
            String owner = lockOwner(lockFile, lockPath);
            if (!owner.isEmpty() && !owner.equals(r.resource())) {
                throw new InvalidInputException(target + " is fenced by resource " + owner + ", not " + r.resource()
                        + ": its lock file " + lockPath + " names the resource every fence write to it must hold"
                        + " (one file, one resource). Use --resource " + Printable.shellWord(owner));
            }
            String current = currentSha256(dir, name);
            if (!current.equals(expected)) {
                Fenced f = new Fenced(
                        r.resource(),
                        null,
                        r.token(),
                        0,
                        Reason.FILE_CHANGED,
                        null,
                        null,
                        target + " has sha256 " + describe(current) + ", not the " + describe(expected)
                                + " you read; someone wrote it since");
                writes.refusedByTarget(attempt, f);
                return new Outcome.Refused(f, reread);
            }
            seam.beforeAdmit(target);
            if (writes.admit(attempt) instanceof FencedWrites.Decision.Refused refused) {
                return new Outcome.Refused(refused.fenced(), reread);
            }
            if (owner.isEmpty()) {
                // Recorded only once the token was admitted, so that no one can tie a file to a resource
                // without a valid lease on it.
                lockFile.truncate(0);
                lockFile.write(ByteBuffer.wrap(r.resource().getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0);
                lockFile.force(true);
            }
            replace(dir, name, r.content());
            String written = sha256(r.content());
            writes.landed(attempt, "wrote " + target + " (sha256 " + written + ", was " + describe(current) + ")");
            return new Outcome.Written(target, current, written);
        } catch (IOException e) {
            throw new InvalidInputException("cannot write " + target + ": " + e.getMessage());
        } finally {
            local.unlock();
        }
    }

    /**
     * Opens {@code target} for reading, refusing anything but a regular file: a named pipe would block the
     * read (and its caller) for ever, a device never end. O_NOFOLLOW as well: a link swapped in after
     * confine() is refused by open(2).
     *
     * @throws NoSuchFileException when there is no such file
     */
    private static SeekableByteChannel openRegular(ConfinedDirectory dir, String name) throws IOException {
        BasicFileAttributes a = dir.attributes(name);
        if (!a.isRegularFile()) {
            throw new InvalidInputException(
                    dir.path().resolve(name) + " is not a regular file; fence reads and writes only regular files");
        }
        // A second name may be outside the root: reading through it would show (or hash) that file.
        int links = dir.links(name, a.fileKey());
        if (links != 1) {
            throw new InvalidInputException(dir.path().resolve(name) + " is a hard link (" + links + " names): its"
                    + " content is a file that may live outside the root, which fence neither reads nor compares."
                    + " Make it a file of its own (cp it, then mv the copy over it)");
        }
        return dir.open(name, Set.of(StandardOpenOption.READ));
    }

    /**
     * The sha256 of the file as it is now, or {@link #MISSING}: streamed, so that a file of any size is
     * compared without holding it (a write may replace a file larger than {@link #read} returns).
     */
    private static String currentSha256(ConfinedDirectory dir, String name) throws IOException {
        try (SeekableByteChannel in = openRegular(dir, name)) {
            MessageDigest digest = sha256Digest();
            ByteBuffer buf = ByteBuffer.allocate(1 << 16);
            while (in.read(buf) >= 0) {
                digest.update(buf.flip());
                buf.clear();
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchFileException e) {
            return MISSING;
        }
    }

    /**
     * Temporary file in the same directory, synced, renamed over the target, then the directory synced; all
     * in the directory opened, which must still be at its path when the rename is made.
     */
    private void replace(ConfinedDirectory dir, String name, byte[] content) throws IOException {
        String temp = "." + name + "." + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".fence-tmp";
        // A new file gets 0644 less the umask, as editors' and other tools' atomic writes do (not
        // createTempFile's 0600, which agents under other uids could not read); a replaced file keeps its mode.
        Set<StandardOpenOption> create = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        FileChannel ch = dir.posix()
                ? dir.open(
                        temp,
                        create,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")))
                : dir.open(temp, create);
        try {
            try (ch) {
                Set<PosixFilePermission> mode = dir.permissions(name);
                if (mode != null) {
                    dir.setPermissions(temp, mode);
                }
                ByteBuffer buf = ByteBuffer.wrap(content);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            Path dirPath = dir.path();
            seam.beforeRename(dirPath.resolve(temp), dirPath.resolve(name));
            // The file would land in the directory opened, under the root, but not at the path named: refused,
            // so that no one is told a path was written that was not.
            dir.checkStillAtItsPath("nothing was written");
            try {
                dir.rename(temp, name);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system cannot rename atomically in " + dirPath, e);
            }
        } catch (IOException | RuntimeException e) {
            try {
                dir.deleteIfExists(temp);
            } catch (IOException | RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        // The rename is durable once the directory is: without this a crash could bring the old name back.
        dir.sync();
    }

    /**
     * Refuses a lock file that fence must not open or write: a symbolic link or anything but a regular file
     * (opening it could create or lock a file elsewhere), or a regular file with more than one name. A hard
     * link is a regular file, but it may share its content with a file outside the root, which writing the
     * resource into the lock file would truncate and overwrite.
     *
     * @return the lock file's identity ({@link BasicFileAttributes#fileKey()}: device and inode), or null
     *     when there is no lock file yet
     */
    private static Object checkLockFile(ConfinedDirectory dir, String lockName) throws IOException {
        Path lockPath = dir.path().resolve(lockName);
        BasicFileAttributes a;
        try {
            a = dir.attributes(lockName);
        } catch (NoSuchFileException e) {
            return null;
        }
        if (!a.isRegularFile()) {
            throw new InvalidInputException("the lock file " + lockPath + " is a symbolic link or not a regular file;"
                    + " fence does not open a lock through a link (it could create or lock a file outside the root)."
                    + " Remove it");
        }
        int links = dir.links(lockName, a.fileKey());
        if (links != 1) {
            throw new InvalidInputException("the lock file " + lockPath + " is a hard link (" + links + " names):"
                    + " writing the resource into it would write the file it shares its content with, perhaps"
                    + " outside the root. Remove it");
        }
        // Without a file key (a file system that has no inodes) the name stands for the file.
        return a.fileKey() != null ? a.fileKey() : lockPath;
    }

    /**
     * The resource recorded in the lock file, or "" when none is (a new file, or an older fence's empty lock).
     *
     * @throws InvalidInputException when the lock file is longer than a resource name: it is not one fence
     *     wrote, and reading it as naming no one would truncate it and untie the file
     */
    private static String lockOwner(FileChannel lockFile, Path lockPath) throws IOException {
        long size = lockFile.size();
        if (size > MAX_LOCK_FILE) {
            throw new InvalidInputException("the lock file " + lockPath + " is " + size + " bytes, more than the "
                    + MAX_LOCK_FILE + " a resource name takes: fence did not write it, and does not overwrite it."
                    + " Remove it (which unties its file from any resource)");
        }
        if (size == 0) {
            return "";
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size);
        while (buf.hasRemaining() && lockFile.read(buf, buf.position()) >= 0) {
            // read until full
        }
        return new String(buf.array(), 0, buf.position(), java.nio.charset.StandardCharsets.UTF_8).strip();
    }

    private static void closeQuietly(ConfinedDirectory dir) {
        try {
            dir.close();
        } catch (IOException ignored) {
            // the failure being reported is the one that matters
        }
    }

    /**
     * The file {@code path} names, with its directory's real path: refused when that directory is outside
     * the root's real path, when the path is a symbolic link, {@code .} or {@code ..}, a directory, in a git
     * directory ({@link #gitDirectoryOf}), or named like fence's own lock or temporary file ({@link
     * #isFencesOwn}).
     */
    static Confined confine(Path root, Path path) {
        return confine(Root.pin(root), path);
    }

    /** As {@link #confine(Path, Path)}, under a root pinned before; refused if it is not there any more. */
    static Confined confine(Root pinned, Path path) {
        Path root = pinned.real();
        // The root's real path and identity now, read once: both must still be the pinned ones.
        Root now = Root.pin(root);
        if (!now.equals(pinned)) {
            throw new InvalidInputException(rootMoved(root));
        }
        Path rootReal = now.real();
        int bad = Printable.firstUnprintable(path.toString());
        if (bad >= 0) {
            // The path goes into FENCED messages, the ledger and the command fence tells the reader to run.
            throw new InvalidInputException("--path " + Printable.name(path.toString()) + " contains a control or"
                    + " invisible character (U+"
                    + String.format("%04X", path.toString().codePointAt(bad))
                    + ") at position " + bad + "; fence reads and writes only files whose names print as themselves");
        }
        Path abs = root.resolve(path).toAbsolutePath();
        Path name = abs.getFileName();
        if (name == null || name.toString().equals(".") || name.toString().equals("..")) {
            throw new InvalidInputException("--path " + path + " does not name a file");
        }
        if (isFencesOwn(name.toString())) {
            throw new InvalidInputException("--path " + path + " is fence's own lock or temporary file"
                    + " (.<name>.fence-lock, .<name>.<random>.fence-tmp), not a shared file; fence does not read"
                    + " or write it (the lock file names the resource that fences <name>)");
        }
        Path parentReal;
        try {
            parentReal = abs.getParent().toRealPath();
        } catch (IOException e) {
            throw new InvalidInputException("the directory of " + path + " does not exist: " + abs.getParent());
        }
        if (!parentReal.startsWith(rootReal)) {
            throw new InvalidInputException("--path " + path + " is outside the root " + rootReal + " (it resolves to "
                    + parentReal.resolve(name) + "); fence writes only files under --root");
        }
        Path target = parentReal.resolve(name);
        Path gitDir = gitDirectoryOf(target);
        if (gitDir != null) {
            throw new InvalidInputException("--path " + path + " is in the git directory " + gitDir + "; fence does"
                    + " not read or write git's own files: whoever writes a repository's config, hooks or .git file"
                    + " chooses a command the next git run in that clone executes");
        }
        if (Files.isSymbolicLink(target)) {
            throw new InvalidInputException("--path " + path + " is a symbolic link; fence does not write through"
                    + " links (it would replace the link, or write outside the root)");
        }
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new InvalidInputException("--path " + path + " is a directory");
        }
        return new Confined(rootReal, pinned.key(), target);
    }

    /** What a caller is told when its pinned root is no longer the directory at its path. */
    static String rootMoved(Path root) {
        return "the root " + root + " was moved or replaced since fence started (it is now another directory,"
                + " or a link to one); fence reads and writes only under the root it was started with. Nothing"
                + " was read or written; restart fence on the root meant";
    }

    /** A path confined: the root's real path and identity, and the file with its directory's real path. */
    record Confined(Path rootReal, Object rootKey, Path target) {}

    /**
     * A root directory as it was when pinned: its real path and its identity (the file system's file key).
     * A long-running server pins its root once, at start: a root renamed away and replaced meanwhile (by a
     * symbolic link to another agent's clone, or another directory moved to its name) is refused, where
     * resolving the root's name again on every call would follow it wherever it now leads.
     */
    public record Root(Path real, Object key) {
        /**
         * Pins {@code root}.
         *
         * @throws InvalidInputException when it does not exist or is not a directory
         */
        public static Root pin(Path root) {
            try {
                Path real = root.toRealPath();
                BasicFileAttributes a =
                        Files.readAttributes(real, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!a.isDirectory()) {
                    throw new InvalidInputException("root " + root + " is not a directory");
                }
                return new Root(real, a.fileKey());
            } catch (IOException e) {
                throw new InvalidInputException("root " + root + " does not exist");
            }
        }
    }

    /**
     * The git directory {@code target} (a real path, its directory resolved) is in or is, or null: a path
     * component spelt {@code .git} in any case (a case-insensitive file system takes {@code .GIT} for it; a
     * worktree's {@code .git} file names its git directory), or a directory on the way up that git would
     * take for a repository ({@code HEAD}, {@code objects} and {@code refs}: a bare one).
     */
    static Path gitDirectoryOf(Path target) {
        Path p = target.getRoot();
        for (Path part : target) {
            p = p.resolve(part);
            if (part.toString().equalsIgnoreCase(".git")) {
                return p;
            }
        }
        for (Path dir = target.getParent(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("HEAD"))
                    && Files.isDirectory(dir.resolve("objects"))
                    && Files.isDirectory(dir.resolve("refs"))) {
                return dir;
            }
        }
        return null;
    }

    /**
     * Whether {@code name} is spelt like a lock file or a temporary file of fence's. Were a lock file
     * writable through fence, an agent fenced on a file's resource could record a resource of its own in it
     * and then write the file; a temporary file is only ever fence's own. Case is ignored: on a file system
     * that ignores it (macOS), {@code .A.FENCE-LOCK} is the lock file of {@code A}.
     */
    static boolean isFencesOwn(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return n.startsWith(".") && (n.endsWith(".fence-lock") || n.endsWith(".fence-tmp"));
    }

    /** The sha256 of {@code bytes}, lower-case hex. */
    public static String sha256(byte[] bytes) {
        return HexFormat.of().formatHex(sha256Digest().digest(bytes));
    }

    private static MessageDigest sha256Digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    private static String normaliseSha(String sha) {
        if (sha == null || !sha.matches("[0-9a-fA-F]{64}")) {
            throw new InvalidInputException("--expected-sha256 must be 64 hex digits (the sha256 fence read printed;"
                    + " " + MISSING + " for a file that does not exist yet), got '" + sha + "'");
        }
        return sha.toLowerCase(Locale.ROOT);
    }

    private static String describe(String sha) {
        return sha.equals(MISSING) ? MISSING + " (no file)" : sha;
    }
}
