package dev.fence.files;

import dev.fence.core.InvalidInputException;
import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The directory of a shared file, opened once under the root and used by handle, so that what is read and
 * written in it is in that directory whatever happens to the names above it meanwhile.
 *
 * <p>Where the JDK gives a {@link SecureDirectoryStream} (Linux), the root is opened and the directory is
 * reached from it one name at a time, each opened without following a symbolic link ({@code openat} with
 * {@code O_NOFOLLOW}); every file in it is then stat'ed, opened, renamed and removed relative to that open
 * directory ({@code fstatat}, {@code openat}, {@code renameat}, {@code unlinkat}), and a name is never
 * followed as a link. A directory on the way that is a symbolic link, or that git would take for a
 * repository ({@code HEAD}, {@code objects}, {@code refs}), is refused when it is reached.
 *
 * <p>Where it does not (macOS, Windows on JDK 17), every operation goes by path instead, and the directory's
 * real path is resolved again immediately before each one and refused when it is not the one confined: a
 * directory swapped for a link is then refused unless the swap falls between that check and the call,
 * a window of one system call rather than of the whole write.
 *
 * <p>Names passed to the methods are single path components, never followed when they are links. Not
 * thread-safe.
 */
abstract class ConfinedDirectory implements Closeable {
    private final Path path;
    private final Object key;

    private ConfinedDirectory(Path path, Object key) {
        this.path = path;
        this.key = key;
    }

    /**
     * Opens {@code dirReal}, a real path under {@code rootReal} (or the root itself).
     *
     * @param rootKey the root's identity when it was pinned ({@link SharedFiles.Root}); null to take the
     *     directory at {@code rootReal} now
     * @throws InvalidInputException when a directory on the way is a symbolic link, not a directory, or a
     *     git directory (now, which a check of the path before may not have seen)
     */
    static ConfinedDirectory open(Path rootReal, Object rootKey, Path dirReal) throws IOException {
        if (!dirReal.startsWith(rootReal)) {
            throw new IllegalArgumentException(dirReal + " is not under " + rootReal);
        }
        DirectoryStream<Path> stream = Files.newDirectoryStream(rootReal);
        if (!(stream instanceof SecureDirectoryStream<Path> current)) {
            stream.close();
            return ByPath.open(dirReal);
        }
        Path reached = rootReal;
        try {
            // The root opened is the one pinned, not another directory put at its name since.
            Object opened = current.getFileAttributeView(BasicFileAttributeView.class)
                    .readAttributes()
                    .fileKey();
            if (rootKey != null && !rootKey.equals(opened)) {
                throw new InvalidInputException(SharedFiles.rootMoved(rootReal));
            }
            refuseGitDirectory(current, reached);
            if (!dirReal.equals(rootReal)) {
                for (Path part : rootReal.relativize(dirReal)) {
                    SecureDirectoryStream<Path> next = descend(current, reached, part);
                    current.close();
                    current = next;
                    reached = reached.resolve(part);
                    refuseGitDirectory(current, reached);
                }
            }
            Object key = current.getFileAttributeView(BasicFileAttributeView.class)
                    .readAttributes()
                    .fileKey();
            return new Handle(current, dirReal, key);
        } catch (IOException | RuntimeException e) {
            current.close();
            throw e;
        }
    }

    /**
     * What {@link #open} gives where the JDK has no {@link SecureDirectoryStream}: {@code dirReal} by path,
     * its real path checked again before each operation. Reachable on any platform, so that it is tested.
     */
    static ConfinedDirectory openByPath(Path dirReal) throws IOException {
        return ByPath.open(dirReal);
    }

    private static SecureDirectoryStream<Path> descend(SecureDirectoryStream<Path> dir, Path dirPath, Path part)
            throws IOException {
        try {
            return dir.newDirectoryStream(part, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            // O_NOFOLLOW fails a link with ELOOP, whose message says nothing useful: name the link instead.
            BasicFileAttributes a;
            try {
                a = dir.getFileAttributeView(part, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                        .readAttributes();
            } catch (IOException notThere) {
                throw new InvalidInputException("the directory " + dirPath.resolve(part)
                        + " is gone (it was moved or removed while fence" + " opened it); nothing was read or written");
            }
            if (a.isSymbolicLink()) {
                throw new InvalidInputException("the directory " + dirPath.resolve(part) + " is now a symbolic link"
                        + " (it was replaced while fence opened it); fence does not follow links on the way to a"
                        + " shared file, as one could lead outside the root. Nothing was read or written");
            }
            if (!a.isDirectory()) {
                throw new InvalidInputException(
                        dirPath.resolve(part) + " is not a directory (it was replaced while fence opened it);"
                                + " nothing was read or written");
            }
            throw e;
        }
    }

    /** The rule of {@link SharedFiles#gitDirectoryOf} for one directory, asked of the open directory itself. */
    private static void refuseGitDirectory(SecureDirectoryStream<Path> dir, Path dirPath) throws IOException {
        if (isA(dir, dirPath, "HEAD", false) && isA(dir, dirPath, "objects", true) && isA(dir, dirPath, "refs", true)) {
            throw new InvalidInputException(
                    "the directory " + dirPath + " is a git directory (it has HEAD, objects and refs); fence does"
                            + " not read or write git's own files: whoever writes a repository's config, hooks or"
                            + " .git file chooses a command the next git run in that clone executes");
        }
    }

    private static boolean isA(SecureDirectoryStream<Path> dir, Path dirPath, String name, boolean directory)
            throws IOException {
        // Links followed, as git and Files.isDirectory follow them; this only reads attributes.
        try {
            BasicFileAttributes a = dir.getFileAttributeView(
                            dirPath.getFileSystem().getPath(name), BasicFileAttributeView.class)
                    .readAttributes();
            return directory ? a.isDirectory() : a.isRegularFile();
        } catch (IOException e) {
            return false;
        }
    }

    /** The directory's real path when it was confined: for messages, and for the checks of {@link ByPath}. */
    final Path path() {
        return path;
    }

    /**
     * Refuses a directory that is no longer at its path: moved, removed, or the path now leads elsewhere
     * (a directory above it swapped for a link). Files already read or written went to the directory
     * opened, under the root; this makes the caller stop rather than report the path as written.
     */
    final void checkStillAtItsPath(String nothingDone) throws IOException {
        Object now;
        try {
            Path real = path.toRealPath();
            now = real.equals(path)
                    ? Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                            .fileKey()
                    : null;
        } catch (NoSuchFileException e) {
            now = null;
        }
        if (now == null || !now.equals(key)) {
            throw new InvalidInputException("the directory " + path + " was moved or replaced (a directory on the way"
                    + " to it renamed, or swapped for a symbolic link) while fence used it; " + nothingDone
                    + ". Try again");
        }
    }

    /** Whether the file system has POSIX permissions. */
    abstract boolean posix();

    /** The attributes of {@code name}, not following a link. */
    abstract BasicFileAttributes attributes(String name) throws IOException;

    /**
     * How many names the file {@code name} has (1 where the file system cannot say).
     *
     * @param key the file key {@link #attributes} returned for it, or null
     * @throws InvalidInputException when {@code name} is another file than the one {@code key} identifies
     */
    abstract int links(String name, Object key) throws IOException;

    /** Opens {@code name} with {@code options}, never following a link. */
    abstract FileChannel open(String name, Set<? extends OpenOption> options, FileAttribute<?>... attrs)
            throws IOException;

    /** The POSIX attributes of {@code name}, never following a link; null where there are none. */
    abstract PosixFileAttributeView posixView(String name) throws IOException;

    /** The permissions of {@code name}, or null when there is no such file or no POSIX permissions. */
    final Set<PosixFilePermission> permissions(String name) throws IOException {
        PosixFileAttributeView v = posixView(name);
        if (v == null) {
            return null;
        }
        try {
            return v.readAttributes().permissions();
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    final void setPermissions(String name, Set<PosixFilePermission> permissions) throws IOException {
        PosixFileAttributeView v = posixView(name);
        if (v != null) {
            v.setPermissions(permissions);
        }
    }

    /** Renames {@code from} over {@code to} atomically, both in this directory. */
    abstract void rename(String from, String to) throws IOException;

    abstract void deleteIfExists(String name) throws IOException;

    /** Syncs the directory itself, so that a rename in it survives a crash. */
    abstract void sync() throws IOException;

    private static Set<OpenOption> noFollow(Set<? extends OpenOption> options) {
        Set<OpenOption> all = new HashSet<>(options);
        all.add(LinkOption.NOFOLLOW_LINKS);
        return all;
    }

    /** A {@link SecureDirectoryStream}: every operation relative to the open directory. */
    private static final class Handle extends ConfinedDirectory {
        private final SecureDirectoryStream<Path> dir;

        Handle(SecureDirectoryStream<Path> dir, Path path, Object key) {
            super(path, key);
            this.dir = dir;
        }

        private Path name(String name) {
            return path().getFileSystem().getPath(name);
        }

        @Override
        boolean posix() {
            return dir.getFileAttributeView(PosixFileAttributeView.class) != null;
        }

        @Override
        BasicFileAttributes attributes(String name) throws IOException {
            return dir.getFileAttributeView(name(name), BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .readAttributes();
        }

        @Override
        int links(String name, Object key) throws IOException {
            // A directory stream's views have no link count, so it is read by path, and kept only when the
            // path still names the file the open directory holds.
            Map<String, Object> a;
            try {
                a = Files.readAttributes(path().resolve(name), "unix:nlink,fileKey", LinkOption.NOFOLLOW_LINKS);
            } catch (UnsupportedOperationException | IllegalArgumentException e) {
                return 1;
            }
            if (key != null && !key.equals(a.get("fileKey"))) {
                throw new InvalidInputException(path().resolve(name) + " is not the file fence opened in " + path()
                        + " (the directory was moved or replaced meanwhile); nothing was written. Try again");
            }
            return (Integer) a.get("nlink");
        }

        @Override
        FileChannel open(String name, Set<? extends OpenOption> options, FileAttribute<?>... attrs) throws IOException {
            SeekableByteChannel ch = dir.newByteChannel(name(name), noFollow(options), attrs);
            if (ch instanceof FileChannel f) {
                return f;
            }
            ch.close();
            throw new IOException("the file system gives no file channel for " + path().resolve(name));
        }

        @Override
        PosixFileAttributeView posixView(String name) {
            return dir.getFileAttributeView(name(name), PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        }

        @Override
        void rename(String from, String to) throws IOException {
            // renameat(2) in one directory: atomic, and it replaces the name (a link included) rather than
            // following it.
            dir.move(name(from), dir, name(to));
        }

        @Override
        void deleteIfExists(String name) throws IOException {
            try {
                dir.deleteFile(name(name));
            } catch (NoSuchFileException e) {
                // already gone
            }
        }

        @Override
        void sync() throws IOException {
            try (FileChannel d = open(".", Set.of(StandardOpenOption.READ))) {
                d.force(true);
            }
        }

        @Override
        public void close() throws IOException {
            dir.close();
        }
    }

    /** By path, the directory's real path checked again before each operation. */
    private static final class ByPath extends ConfinedDirectory {
        ByPath(Path path, Object key) {
            super(path, key);
        }

        static ByPath open(Path dirReal) throws IOException {
            BasicFileAttributes a = Files.readAttributes(dirReal, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isDirectory()) {
                throw new InvalidInputException(dirReal + " is not a directory (it was replaced while fence opened"
                        + " it); nothing was read or written");
            }
            // The file key where there is one; else the path stands for the directory.
            return new ByPath(dirReal, Objects.requireNonNullElse(a.fileKey(), dirReal));
        }

        private Path checked(String name) throws IOException {
            if (!path().toRealPath().equals(path())) {
                throw new InvalidInputException("the directory " + path() + " was moved or replaced (a directory on"
                        + " the way to it renamed, or swapped for a symbolic link) while fence used it; nothing"
                        + " more was read or written. Try again");
            }
            return path().resolve(name);
        }

        @Override
        boolean posix() {
            return Files.getFileAttributeView(path(), PosixFileAttributeView.class) != null;
        }

        @Override
        BasicFileAttributes attributes(String name) throws IOException {
            return Files.readAttributes(checked(name), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        }

        @Override
        int links(String name, Object key) throws IOException {
            try {
                return (Integer) Files.getAttribute(checked(name), "unix:nlink", LinkOption.NOFOLLOW_LINKS);
            } catch (UnsupportedOperationException | IllegalArgumentException e) {
                return 1;
            }
        }

        @Override
        FileChannel open(String name, Set<? extends OpenOption> options, FileAttribute<?>... attrs) throws IOException {
            return FileChannel.open(checked(name), noFollow(options), attrs);
        }

        @Override
        PosixFileAttributeView posixView(String name) throws IOException {
            return Files.getFileAttributeView(checked(name), PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        }

        @Override
        void rename(String from, String to) throws IOException {
            Path source = checked(from);
            Files.move(source, checked(to), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }

        @Override
        void deleteIfExists(String name) throws IOException {
            Files.deleteIfExists(checked(name));
        }

        @Override
        void sync() throws IOException {
            try (FileChannel d = FileChannel.open(checked("."), StandardOpenOption.READ)) {
                d.force(true);
            }
        }

        @Override
        public void close() {}
    }
}
