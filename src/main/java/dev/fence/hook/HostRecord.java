package dev.fence.hook;

import dev.fence.core.AcceptedMark;
import dev.fence.core.Digests;
import dev.fence.core.Names;
import dev.fence.core.StoreUnavailableException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The repository's own record of what its hook admitted: per fenced ref (by its resource: repo id and ref), the highest token and the holder
 * proven for it ({@link AcceptedMark}). It lives with the repository, in {@code <GIT_DIR>/fence/accepted/},
 * one small file per resource (named by the SHA-256 of the resource name, so that a push reads only the resources it
 * updates), not in the lease store: a store that loses or rolls back data cannot lower it.
 *
 * <p>The hook holds the record's lock ({@code <GIT_DIR>/fence/accepted.lock}) from before it reads the
 * record until after it raised it, so two pushes to one repository are judged one after the other against
 * each other's record. The hook must not write refs inside the pre-receive quarantine; these are plain
 * files, which it may. A mark only ever goes up.
 *
 * <p>Not thread-safe: one per push.
 */
final class HostRecord implements AutoCloseable {
    private static final String VERSION = "v1";

    /** Far more than a mark's one line (a resource name is at most a few hundred bytes). */
    private static final long MAX_FILE_BYTES = 64 * 1024;

    /** How a push that found the record locked by other pushes for its whole time says so. */
    static final String BUSY = "the repository is busy: its record of accepted tokens stayed locked by other pushes";

    /**
     * The record stayed locked by other pushes: the repository is busy, the store may be fine. Not an outage
     * for {@code on-store-down} to wave pushes through: the pre-receive hook refuses fenced refs then.
     */
    static final class Busy extends StoreUnavailableException {
        private static final long serialVersionUID = 1L;

        Busy(String message) {
            super(message);
        }
    }

    private final Path dir;
    private final Digests digests;
    private final FileChannel lockChannel;
    private final FileLock lock;
    /** What {@link #read(Collection)} found, under this lock: the marks {@link #raise} compares against. */
    private final Map<String, AcceptedMark> known = new HashMap<>();
    /** Each resource's file, named by a digest that a push's read and raise would otherwise both compute. */
    private final Map<String, Path> files = new HashMap<>();

    private HostRecord(Path dir, Digests digests, FileChannel lockChannel, FileLock lock) {
        this.dir = dir;
        this.digests = digests;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /**
     * Takes the record's lock, waiting at most until {@code deadlineNanos} ({@link System#nanoTime()}).
     *
     * @param digests names the record's files
     * @throws StoreUnavailableException when the record cannot be opened or stays locked
     */
    static HostRecord lock(Path gitDir, long deadlineNanos, Digests digests) {
        Path base = gitDir.resolve("fence");
        Path dir = base.resolve("accepted");
        FileChannel ch = null;
        try {
            Path lockFile = base.resolve("accepted.lock");
            try {
                ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            } catch (NoSuchFileException e) {
                // The repository's first fenced push: the record's directory is made once, not on every push.
                Files.createDirectories(base);
                ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            }
            while (true) {
                FileLock l = ch.tryLock();
                if (l != null) {
                    return new HostRecord(dir, digests, ch, l);
                }
                if (System.nanoTime() - deadlineNanos >= 0) {
                    throw new Busy(BUSY + " (" + base + ")");
                }
                Thread.sleep(5);
            }
        } catch (IOException | RuntimeException | InterruptedException e) {
            closeQuietly(ch);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (e instanceof StoreUnavailableException s) {
                throw s;
            }
            throw new StoreUnavailableException(
                    "cannot use the repository's record of accepted tokens in " + base + ": " + e.getMessage(), e);
        }
    }

    /** The marks of {@code resources} (resources without one are absent). */
    Map<String, AcceptedMark> read(Collection<String> resources) {
        Map<String, AcceptedMark> marks = new HashMap<>();
        for (String resource : resources) {
            AcceptedMark m = read(resource);
            known.put(resource, m);
            if (m != null) {
                marks.put(resource, m);
            }
        }
        return marks;
    }

    private AcceptedMark read(String resource) {
        Path file = fileOf(resource);
        String text;
        try {
            // java.io, as SmallFiles says why: a one-shot hook reads no file through NIO's channels.
            byte[] bytes = SmallFiles.readIfExists(file, MAX_FILE_BYTES);
            if (bytes == null) {
                if (!SmallFiles.exists(file)) {
                    return null;
                }
                // Longer than any mark: damaged, refused below.
                bytes = new byte[0];
            }
            text = new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new StoreUnavailableException(
                    "cannot read the repository's record " + file + ": " + e.getMessage(), e);
        }
        // "v1 <token> <holder as base64url, or -> <resource>\n"
        String[] parts =
                text.endsWith("\n") ? text.substring(0, text.length() - 1).split(" ", 4) : new String[0];
        try {
            if (parts.length == 4 && parts[0].equals(VERSION) && parts[3].equals(resource)) {
                long token = Long.parseLong(parts[1]);
                String holder = parts[2].equals("-")
                        ? null
                        : Names.require(
                                "holder", new String(Base64.getUrlDecoder().decode(parts[2]), StandardCharsets.UTF_8));
                if (token > 0) {
                    return new AcceptedMark(resource, token, holder);
                }
            }
        } catch (IllegalArgumentException e) {
            // falls through: a damaged record is refused below, never taken as "no record"
        }
        throw new StoreUnavailableException("the repository's record " + file + " is damaged; fenced pushes to "
                + resource + " are refused until an admin restores or removes it");
    }

    /**
     * Raises the marks given (a mark below the one recorded is left as it is), each written atomically. A
     * mark {@link #read(Collection)} already read under this lock is not read again: nobody else writes
     * while the lock is held.
     */
    void raise(List<AcceptedMark> marks) {
        for (AcceptedMark m : marks) {
            AcceptedMark old = known.containsKey(m.resource()) ? known.get(m.resource()) : read(m.resource());
            if (old != null && old.token() > m.token()) {
                continue;
            }
            Path file = fileOf(m.resource());
            String holder = m.holder() == null
                    ? "-"
                    : Base64.getUrlEncoder()
                            .withoutPadding()
                            .encodeToString(m.holder().getBytes(StandardCharsets.UTF_8));
            byte[] line = (VERSION + " " + m.token() + " " + holder + " " + m.resource() + "\n")
                    .getBytes(StandardCharsets.UTF_8);
            try {
                // Not forced to disk: git does not sync the ref update this record stands beside either
                // (core.fsync leaves refs out by default), and a sync costs every push milliseconds.
                // A crash can lose the newest mark, never raise one: protection lapses, nothing is refused.
                SmallFiles.replace(file, line);
                known.put(m.resource(), m);
            } catch (IOException e) {
                throw new StoreUnavailableException(
                        "cannot write the repository's record " + file + ": " + e.getMessage(), e);
            }
        }
    }

    private Path fileOf(String resource) {
        Path file = files.get(resource);
        if (file == null) {
            String hex = digests.sha256Hex(resource);
            file = dir.resolve(hex.substring(0, 2)).resolve(hex.substring(2));
            files.put(resource, file);
        }
        return file;
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException e) {
            // the channel's close below releases it too
        }
        closeQuietly(lockChannel);
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // nothing to do: the lock goes with the process at the latest
            }
        }
    }
}
