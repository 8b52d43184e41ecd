package dev.fence.hook;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Reads (and writes) the small files a hook needs (its configuration, the repository's git config, loose
 * objects, its record of accepted tokens) through {@code java.io}, which the JVM has already set up to read
 * its own class path. The equivalent {@code java.nio.file.Files} calls first build NIO's file-channel
 * machinery (some forty classes, direct buffers, a native dispatcher), which a one-shot hook process would
 * pay on every push.
 */
final class SmallFiles {
    private SmallFiles() {}

    /**
     * The bytes of {@code file}, or null when it does not exist.
     *
     * @param maxBytes a file longer than this is not read: null is returned
     * @throws IOException when the file exists but cannot be read (a directory, no permission)
     */
    static byte[] readIfExists(Path file, long maxBytes) throws IOException {
        File f = file.toFile();
        if (f.length() > maxBytes) {
            return null;
        }
        try (FileInputStream in = new FileInputStream(f)) {
            return in.readAllBytes();
        } catch (FileNotFoundException e) {
            if (!f.exists()) {
                return null;
            }
            throw e;
        }
    }

    /**
     * Replaces {@code file} with {@code content} atomically: writes {@code <file>.tmp} (making the file's
     * directory when it is missing) and renames it over the file. Not forced to disk: callers say why
     * that is enough.
     */
    static void replace(Path file, byte[] content) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        FileOutputStream stream;
        try {
            stream = new FileOutputStream(tmp.toFile());
        } catch (FileNotFoundException e) {
            if (exists(file.getParent())) {
                throw e;
            }
            Files.createDirectories(file.getParent());
            stream = new FileOutputStream(tmp.toFile());
        }
        try (FileOutputStream out = stream) {
            out.write(content);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** True when {@code file} exists (as {@code Files.exists}, following links). */
    static boolean exists(Path file) {
        return file.toFile().exists();
    }

    /** True when {@code file} is a regular file (as {@code Files.isRegularFile}, following links). */
    static boolean isFile(Path file) {
        return file.toFile().isFile();
    }
}
