package dev.fence.hook;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Reads the small files a hook needs (its configuration, the repository's git config, loose objects)
 * through {@code java.io}, which the JVM has already set up to read its own class path. The equivalent
 * {@code java.nio.file.Files} calls first build NIO's file-channel machinery (some forty classes, direct
 * buffers, a native dispatcher), which a one-shot hook process would pay on every push.
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

    /** True when {@code file} exists (as {@code Files.exists}, following links). */
    static boolean exists(Path file) {
        return file.toFile().exists();
    }

    /** True when {@code file} is a regular file (as {@code Files.isRegularFile}, following links). */
    static boolean isFile(Path file) {
        return file.toFile().isFile();
    }
}
