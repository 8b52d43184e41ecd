package dev.fence.install;

import dev.fence.core.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The files one installer run writes. All are checked before any is written, so a refusal changes
 * nothing; each is then replaced atomically (written beside its target and renamed over it), so a push
 * arriving mid-install runs either the old hook or the new one, never half a file.
 */
final class FilePlan {
    static final Set<PosixFilePermission> EXECUTABLE = PosixFilePermissions.fromString("rwxr-xr-x");
    static final Set<PosixFilePermission> READABLE = PosixFilePermissions.fromString("rw-r--r--");
    static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rw-------");

    private record Item(Path path, byte[] content, Set<PosixFilePermission> permissions, Predicate<byte[]> ours) {}

    private final List<Item> items = new ArrayList<>();

    /** Plans a text file recognised as ours by {@link HookScripts#MARKER}. */
    FilePlan add(Path path, String content, Set<PosixFilePermission> permissions) {
        return add(path, content.getBytes(StandardCharsets.UTF_8), permissions, HookScripts::isOurs);
    }

    /** Plans a file recognised as ours by {@code ours}. */
    FilePlan add(Path path, byte[] content, Set<PosixFilePermission> permissions, Predicate<byte[]> ours) {
        items.add(new Item(path, content, permissions, ours));
        return this;
    }

    /** The planned files that exist and were not written by fence. */
    List<Path> foreign() {
        List<Path> out = new ArrayList<>();
        for (Item item : items) {
            if (Files.isDirectory(item.path())) {
                throw new ConfigException(item.path() + " is a directory; fence would write a file there");
            }
            if (Files.exists(item.path()) && !item.ours().test(read(item.path()))) {
                out.add(item.path());
            }
        }
        return out;
    }

    /** The refusal for {@link #foreign()} files, or null when there are none. */
    InstallResult.Refused refusal() {
        List<Path> foreign = foreign();
        if (foreign.isEmpty()) {
            return null;
        }
        StringBuilder why = new StringBuilder("refusing to replace ");
        why.append(foreign.size() == 1 ? "a file" : foreign.size() + " files").append(" that fence did not install");
        why.append(" (no '").append(HookScripts.MARKER).append("' line):");
        for (Path p : foreign) {
            why.append("\n  ").append(p);
        }
        why.append("\nNothing was changed. Merge your hook with fence's by hand, or rerun with --force to replace it")
                .append(" (the old file is kept next to it as <name>.fence-backup, not executable).");
        return new InstallResult.Refused(why.toString());
    }

    /**
     * Writes every planned file, backing up foreign ones first (call only after {@link #refusal()} is
     * null, or with force). Returns one report line per file.
     *
     * @throws ConfigException when a file cannot be written
     */
    List<String> write() {
        List<String> done = new ArrayList<>();
        for (Item item : items) {
            Path path = item.path();
            try {
                if (Files.exists(path)) {
                    byte[] old = read(path);
                    if (!item.ours().test(old)) {
                        // Copy, not move: the target is replaced atomically below, so no push ever finds it missing.
                        Path backup = backupName(path);
                        Files.copy(path, backup);
                        setPermissions(backup, READABLE);
                        done.add("kept the previous " + path.getFileName() + " (not fence's) as " + backup);
                    } else if (Arrays.equals(old, item.content()) && permissionsMatch(path, item.permissions())) {
                        done.add("unchanged " + path);
                        continue;
                    } else {
                        replace(item);
                        done.add("updated " + path);
                        continue;
                    }
                }
                replace(item);
                done.add("wrote " + path);
            } catch (IOException e) {
                throw new ConfigException("cannot write " + path + ": " + e, e);
            }
        }
        return done;
    }

    private static void replace(Item item) throws IOException {
        Path path = item.path();
        Path dir = path.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "." + path.getFileName(), ".fence-tmp");
        try {
            Files.write(tmp, item.content());
            setPermissions(tmp, item.permissions());
            try {
                Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static Path backupName(Path path) {
        Path backup = path.resolveSibling(path.getFileName() + ".fence-backup");
        for (int n = 1; Files.exists(backup); n++) {
            backup = path.resolveSibling(path.getFileName() + ".fence-backup." + n);
        }
        return backup;
    }

    private static boolean permissionsMatch(Path path, Set<PosixFilePermission> wanted) throws IOException {
        try {
            return Files.getPosixFilePermissions(path).equals(wanted);
        } catch (UnsupportedOperationException e) {
            return true;
        }
    }

    private static void setPermissions(Path path, Set<PosixFilePermission> permissions) throws IOException {
        try {
            Files.setPosixFilePermissions(path, permissions);
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system (Windows): git hosts that run hooks are POSIX, so nothing to do.
        }
    }

    static byte[] read(Path path) {
        try {
            return Files.readAllBytes(path);
        } catch (IOException e) {
            throw new ConfigException("cannot read " + path + ": " + e, e);
        }
    }
}
