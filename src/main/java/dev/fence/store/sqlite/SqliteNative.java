package dev.fence.store.sqlite;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Keeps sqlite-jdbc's native library in a per-user cache instead of letting the driver extract a fresh
 * copy into the temporary directory on every start. Each hook run is a new JVM, so extraction (a
 * megabyte written and loaded, and a file left behind when the JVM exits through {@code System.exit})
 * would be paid on every push.
 *
 * <p>The cached file is named after its content hash, written under a temporary name and moved into
 * place, and lives in a directory only this user can write, so a half-written or foreign library is
 * never loaded. Any problem leaves the driver's own extraction in charge.
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
        try (InputStream in = SqliteNative.class.getResourceAsStream(resource)) {
            if (in == null) {
                return;
            }
            byte[] lib = in.readAllBytes();
            String name = "libsqlitejdbc-" + HexFormat.of().formatHex(sha256(lib), 0, 12) + ".so";
            Path dir = Path.of(System.getProperty("user.home"), ".cache", "fence", "native");
            Files.createDirectories(dir);
            if (!Files.isWritable(dir) || !Files.getOwner(dir).equals(Files.getOwner(dir.getParent()))) {
                return;
            }
            Path target = dir.resolve(name);
            if (!Files.isRegularFile(target) || Files.size(target) != lib.length) {
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

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
