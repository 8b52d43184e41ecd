package dev.fence.store.sqlite;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.jar.JarEntry;
import java.util.zip.CRC32;

/**
 * Keeps sqlite-jdbc's native library in a per-user cache instead of letting the driver extract a fresh
 * copy into the temporary directory on every start. Each hook run is a new JVM, so extraction (a
 * megabyte written and loaded, and a file left behind when the JVM exits through {@code System.exit})
 * would be paid on every push.
 *
 * <p>The cached file is named after the library's size and CRC-32 as the jar's directory records them
 * (so a start that finds it cached reads and hashes nothing: one {@code stat}), is checked against that
 * CRC when written, is written under a temporary name and moved into place, and lives in a directory
 * only this user can write, so a half-written or foreign library is never loaded. Any problem leaves the
 * driver's own extraction in charge.
 */
final class SqliteNative {
    private static volatile boolean prepared;

    private SqliteNative() {}

    /** Points sqlite-jdbc at the cached library (creating it once), when the platform is one it ships. */
    static void prepare() {
        if (prepared || System.getProperty("org.sqlite.lib.path") != null) {
            return;
        }
        prepared = true;
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"))) {
            return;
        }
        String folder = "Linux/" + (arch.equals("aarch64") ? "aarch64" : "x86_64");
        String resource = "/org/sqlite/native/" + folder + "/libsqlitejdbc.so";
        try {
            URL url = SqliteNative.class.getResource(resource);
            if (url == null || !url.getProtocol().equals("jar")) {
                return;
            }
            // The jar's directory records each entry's size and CRC-32: the cached file's name is made from
            // them, so a start whose library is already cached reads neither the megabyte nor hashes it.
            JarURLConnection connection = (JarURLConnection) url.openConnection();
            connection.setUseCaches(true);
            JarEntry entry = connection.getJarEntry();
            long size = entry.getSize();
            long crc = entry.getCrc();
            if (size <= 0 || crc < 0) {
                return;
            }
            String name = "libsqlitejdbc-" + Long.toHexString(crc) + "-" + size + ".so";
            Path dir = Path.of(System.getProperty("user.home"), ".cache", "fence", "native");
            Path target = dir.resolve(name);
            if (!isCached(target, size)) {
                Files.createDirectories(dir);
                if (!Files.isWritable(dir) || !Files.getOwner(dir).equals(Files.getOwner(dir.getParent()))) {
                    return;
                }
                byte[] lib;
                try (InputStream in = connection.getInputStream()) {
                    lib = in.readAllBytes();
                }
                CRC32 check = new CRC32();
                check.update(lib);
                if (lib.length != size || check.getValue() != crc) {
                    return;
                }
                Path tmp = Files.createTempFile(dir, name, ".part");
                Files.write(tmp, lib);
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("r-xr-xr-x"));
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            System.setProperty("org.sqlite.lib.path", dir.toString());
            System.setProperty("org.sqlite.lib.name", name);
        } catch (IOException | RuntimeException e) {
            // The driver extracts its own copy as usual.
        }
    }

    /** True when {@code file} is a regular file of {@code size} bytes. */
    private static boolean isCached(Path file, long size) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return a.isRegularFile() && a.size() == size;
        } catch (IOException e) {
            return false;
        }
    }
}
