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
import org.sqlite.SQLiteJDBCLoader;

/**
 * Keeps sqlite-jdbc's native library in a per-user cache instead of letting the driver extract a fresh
 * copy into the temporary directory on every start. Each hook run is a new JVM, so extraction (a
 * megabyte written and loaded, and a file left behind when the JVM exits through {@code System.exit})
 * would be paid on every push.
 *
 * <p>The cached file is named after the driver's version and the CPU (so a start that finds it cached
 * reads nothing from the jar: one {@code stat}), is checked against the CRC-32 the jar's directory
 * records when written, is written under a temporary name and moved into place, and lives in a directory
 * only this user can write, so a half-written or foreign library is never loaded. Any problem leaves the
 * driver's own extraction in charge.
 */
final class SqliteNative {
    private static volatile boolean prepared;

    private SqliteNative() {}

    /**
     * The sqlite-jdbc version this build carries ({@code sqlite.version} in the pom); names the cached
     * library, so that a start whose library is cached reads nothing from the jar. SqliteNativeTest
     * checks it against the driver's own version.
     */
    static final String DRIVER_VERSION = "3.51.1.0";

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
        String cpu = arch.equals("aarch64") ? "aarch64" : "x86_64";
        String name = "libsqlitejdbc-" + DRIVER_VERSION + "-linux-" + cpu + ".so";
        Path dir = Path.of(System.getProperty("user.home"), ".cache", "fence", "native");
        Path target = dir.resolve(name);
        try {
            // Written only whole (under a temporary name, then moved) and in a directory only this user
            // writes: a file of that name is the library of that version.
            if (!isCached(target)) {
                extract("/org/sqlite/native/Linux/" + cpu + "/libsqlitejdbc.so", dir, target);
            }
            if (isCached(target)) {
                System.setProperty("org.sqlite.lib.path", dir.toString());
                System.setProperty("org.sqlite.lib.name", name);
                loadAsTheDriverWould(target);
            }
        } catch (IOException | RuntimeException e) {
            // The driver extracts its own copy as usual.
        }
    }

    /** Copies the library out of the jar into {@code target}, checked against the jar's CRC-32. */
    private static void extract(String resource, Path dir, Path target) throws IOException {
        URL url = SqliteNative.class.getResource(resource);
        if (url == null || !url.getProtocol().equals("jar")) {
            return;
        }
        JarURLConnection connection = (JarURLConnection) url.openConnection();
        connection.setUseCaches(true);
        JarEntry entry = connection.getJarEntry();
        long size = entry.getSize();
        long crc = entry.getCrc();
        if (size <= 0 || crc < 0) {
            return;
        }
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
        Path tmp = Files.createTempFile(dir, target.getFileName().toString(), ".part");
        Files.write(tmp, lib);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Loads the cached library and tells the driver's loader it is loaded, as its own loading would. Its
     * first {@code initialize()} would otherwise start by cleaning up libraries it extracted before, which
     * lists the temporary directory for names carrying the driver's version, read from a resource: that
     * opens and indexes the whole fence jar, milliseconds of every SQLite hook, which otherwise reads
     * nothing from the jar. A driver without that private field (another version) is left to load it
     * itself, from the path set above; {@code SqliteNativeTest} checks the field is there.
     */
    private static void loadAsTheDriverWould(Path library) {
        java.lang.reflect.Field extracted;
        try {
            extracted = SQLiteJDBCLoader.class.getDeclaredField(LOADED_FIELD);
            if (extracted.getType() != boolean.class
                    || !java.lang.reflect.Modifier.isStatic(extracted.getModifiers())) {
                return;
            }
            extracted.setAccessible(true);
        } catch (NoSuchFieldException | RuntimeException e) {
            return;
        }
        synchronized (SQLiteJDBCLoader.class) {
            try {
                if (!extracted.getBoolean(null)) {
                    System.load(library.toString());
                    extracted.setBoolean(null, true);
                }
            } catch (IllegalAccessException | RuntimeException | UnsatisfiedLinkError e) {
                // The driver's own loading reports it.
            }
        }
    }

    /** The private static field in which sqlite-jdbc's loader records that its library is loaded. */
    static final String LOADED_FIELD = "extracted";

    /** True when {@code file} is a non-empty regular file. */
    private static boolean isCached(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return a.isRegularFile() && a.size() > 0;
        } catch (IOException e) {
            return false;
        }
    }
}
