package dev.fence.store.sqlite;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.zip.CRC32;
import org.sqlite.SQLiteJDBCLoader;
import org.sqlite.core.DirectAccess;

/**
 * Keeps sqlite-jdbc's native library in a per-user cache instead of letting the driver extract a fresh
 * copy into the temporary directory on every start. Each hook run is a new JVM, so extraction (a
 * megabyte read from the jar, written and loaded, and a file left behind when the JVM exits through
 * {@code System.exit}) would be paid on every push.
 *
 * <p>What is loaded from the cache ({@code ~/.cache/fence/native}) is code run as this user, so a library
 * is loaded from it only when nobody else can have put it there and it is the driver's own:
 *
 * <ul>
 *   <li>the directory is a real directory (not a symbolic link), owned by this user, mode 0700 (created so,
 *       in one {@code mkdir}), in a parent owned by this user that no one else can write; a directory that
 *       fails this is not used at all;
 *   <li>the library and the manifest beside it are regular files (checked without following links), owned
 *       by this user (its user id, read from {@code /proc/self}) and writable by no one else;
 *   <li>the library's SHA-256 equals that of the library inside the driver's jar. Hashing it on every start
 *       would cost a hook milliseconds, so the check is made once, when the file is written or first found,
 *       and recorded in the manifest with what identifies that file (device and inode, size, modification
 *       and change times in ns: the change time moves with every write, chmod, chown or new link, and no
 *       owner can set it back) and the driver's jar (path, size, modification time). A later start that
 *       finds all of them unchanged loads the file without reading the jar; anything else is checked again.
 *       The manifest cannot be forged by anyone the check is meant to stop: only this user (or root) can
 *       write a file in a 0700 directory of this user's, and whoever can write as this user can already run
 *       code as this user.
 * </ul>
 *
 * A library that fails a check is replaced by a fresh copy from the jar, written to a new private file
 * and renamed over it (a rename replaces a planted link instead of following it). When the cache cannot be
 * trusted, or the driver is not the version fence's patch in its packages was written for, the driver's
 * own extraction is left in charge and {@link #note()} says why.
 */
final class SqliteNative {
    private static volatile boolean prepared;
    private static volatile String note;

    private SqliteNative() {}

    /** Why the last {@link #prepare} left loading to the driver, for an operator; null when it did not. */
    static String note() {
        return note;
    }

    /** Points sqlite-jdbc at the verified cached library (writing it once), on the platforms it ships for. */
    static void prepare() {
        if (prepared || System.getProperty(LIB_PATH) != null) {
            return;
        }
        prepared = true;
        String resource = resourceForThisPlatform();
        if (resource == null) {
            return;
        }
        Choice choice = choose(
                Path.of(System.getProperty("user.home"), ".cache", "fence", "native"),
                resource,
                DirectAccess.PATCHED_FOR);
        note = choice.note();
        if (choice.library() != null) {
            setDriverLibraryProperties(choice.library());
            loadAsTheDriverWould(choice.library());
        }
    }

    /**
     * The one place this class sets system properties: {@code org.sqlite.lib.path} and {@code
     * org.sqlite.lib.name}, which make the driver's loader load {@code library} when it loads one itself.
     */
    static void setDriverLibraryProperties(Path library) {
        System.setProperty(LIB_PATH, library.getParent().toString());
        System.setProperty("org.sqlite.lib.name", library.getFileName().toString());
    }

    private static final String LIB_PATH = "org.sqlite.lib.path";

    /** The driver's library for this OS and CPU, as a resource name; null on platforms fence leaves to it. */
    static String resourceForThisPlatform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"))) {
            return null;
        }
        return "/org/sqlite/native/Linux/" + (arch.equals("aarch64") ? "aarch64" : "x86_64") + "/libsqlitejdbc.so";
    }

    /**
     * What a start does with the cache.
     *
     * @param library the verified library to load, or null to leave loading to the driver
     * @param hashed true when this call read the jar and hashed the library (the slow path)
     * @param note why the driver loads its own copy, when {@code library} is null
     */
    record Choice(Path library, boolean hashed, String note) {
        static Choice driver(String why) {
            return new Choice(null, false, why + "; sqlite-jdbc extracts its own copy of its library instead");
        }
    }

    /**
     * Finds (or writes) in {@code dir} the verified copy of the driver's library {@code resource}, for a
     * driver of version {@code patchedFor}. Never throws: every failure leaves loading to the driver.
     */
    static Choice choose(Path dir, String resource, String patchedFor) {
        try {
            // This process's user id: /proc/self is the process's own directory, owned by it.
            int me = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            String problem = privateDirectory(dir, me);
            if (problem != null) {
                return Choice.driver(problem);
            }
            String jar = jarIdentity();
            // One manifest per driver jar: two fence installations of one user do not undo each other's.
            Path manifest = dir.resolve("manifest-" + Integer.toHexString(jar.hashCode()));
            Path recorded = recordedLibrary(manifest, jar, resource, me);
            if (recorded != null) {
                return new Choice(recorded, false, null);
            }
            return verifyAndRecord(dir, manifest, jar, resource, patchedFor, me);
        } catch (IOException | RuntimeException e) {
            return Choice.driver("fence's library cache " + dir + " could not be used (" + e + ")");
        }
    }

    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_DIR =
            PosixFilePermissions.asFileAttribute(PRIVATE);
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_FILE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    /**
     * Null when {@code dir} is a directory only {@code me} can write (creating it, mode 0700, when missing;
     * taking group and world read away from one of {@code me}'s that no one else could write); else why not.
     */
    private static String privateDirectory(Path dir, int me) throws IOException {
        Path parent = dir.getParent();
        Map<String, Object> a = null;
        try {
            a = lstat(dir);
        } catch (NoSuchFileException e) {
            Files.createDirectories(parent, PRIVATE_DIR);
        }
        Map<String, Object> p = Files.readAttributes(parent, ATTRIBUTES);
        if (uid(p) != me || writableByOthers(p)) {
            return "fence's library cache " + dir + " is in a directory " + describe(parent)
                    + ", not one only its user can write";
        }
        if (a == null) {
            try {
                // One mkdir with the mode: the directory is never, even briefly, open to others.
                Files.createDirectory(dir, PRIVATE_DIR);
            } catch (FileAlreadyExistsException raced) {
                // Another fence process made it: checked below like any other.
            }
            a = lstat(dir);
        }
        if (type(a) != S_IFDIR) {
            return "fence's library cache " + dir + " is "
                    + (type(a) == S_IFLNK ? "a symbolic link" : "not a directory")
                    + " (remove it: fence makes it again, mode 0700)";
        }
        if (uid(a) != me || writableByOthers(a)) {
            return "fence's library cache " + dir + " is " + describe(dir)
                    + ", not a directory only its user can write (remove it: fence makes it again, mode 0700)";
        }
        if ((mode(a) & 0777) != 0700) {
            // No one else could have written into it (such as an older fence's cache, made with the umask).
            Files.setPosixFilePermissions(dir, PRIVATE);
        }
        return null;
    }

    /**
     * The library {@code manifest} records, when the manifest is this user's own and everything it records
     * still holds (the same driver jar and resource; the same library file, as this user's own); else null.
     */
    private static Path recordedLibrary(Path manifest, String jar, String resource, int me) {
        try {
            if (!trustedFile(lstat(manifest), me)) {
                return null;
            }
            Map<String, String> m = readManifest(manifest);
            if (!jar.equals(m.get("jar")) || !resource.equals(m.get("resource"))) {
                return null;
            }
            String name = m.get("library");
            if (name == null || name.indexOf('/') >= 0) {
                return null;
            }
            Path library = manifest.resolveSibling(name);
            Map<String, Object> a = lstat(library);
            return trustedFile(a, me) && identity(a).equals(m.get("file")) ? library : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The slow path: the library from the jar, checked, written if need be, and recorded in the manifest. */
    private static Choice verifyAndRecord(
            Path dir, Path manifest, String jar, String resource, String patchedFor, int me) throws IOException {
        String version = SQLiteJDBCLoader.getVersion();
        if (!patchedFor.equals(version)) {
            return Choice.driver("sqlite-jdbc " + version + " is on the class path, but fence's classes in its"
                    + " packages were written for " + patchedFor + " (the pom's sqlite.version)");
        }
        byte[] lib = fromJar(resource);
        if (lib == null) {
            return Choice.driver("the driver's jar holds no intact " + resource);
        }
        String sha = sha256(lib);
        Path library = dir.resolve("libsqlitejdbc-" + sha.substring(0, 16) + ".so");
        if (!holds(library, sha, me)) {
            Path tmp = Files.createTempFile(dir, ".libsqlitejdbc-", ".part", PRIVATE_FILE);
            try {
                Files.write(tmp, lib);
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("r-x------"));
                replace(tmp, library);
            } finally {
                Files.deleteIfExists(tmp);
            }
            if (!holds(library, sha, me)) {
                return Choice.driver("the library written to " + library + " does not read back as written");
            }
        }
        String record = "jar " + jar + "\nresource " + resource + "\ndriver " + version + "\nsha256 " + sha
                + "\nlibrary " + library.getFileName() + "\nfile " + identity(lstat(library)) + "\n";
        Path tmp = Files.createTempFile(dir, ".manifest-", ".part", PRIVATE_FILE);
        try {
            Files.write(tmp, record.getBytes(StandardCharsets.UTF_8));
            replace(tmp, manifest);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return new Choice(library, true, null);
    }

    /** True when {@code library} is this user's own regular file, writable by no one else, of that SHA-256. */
    private static boolean holds(Path library, String sha, int me) {
        try {
            if (!trustedFile(lstat(library), me)) {
                return false;
            }
            try (InputStream in = Files.newInputStream(library, LinkOption.NOFOLLOW_LINKS)) {
                return sha.equals(sha256(in.readAllBytes()));
            }
        } catch (IOException e) {
            // Missing, unreadable, or a link planted under the name since (ELOOP): written afresh.
            return false;
        }
    }

    /** The library read from the driver's jar, checked against the CRC-32 the jar's directory records. */
    private static byte[] fromJar(String resource) throws IOException {
        URL url = SQLiteJDBCLoader.class.getResource(resource);
        if (url == null || !url.getProtocol().equals("jar")) {
            return null;
        }
        JarURLConnection connection = (JarURLConnection) url.openConnection();
        JarEntry entry = connection.getJarEntry();
        byte[] lib;
        try (InputStream in = connection.getInputStream()) {
            lib = in.readAllBytes();
        }
        CRC32 crc = new CRC32();
        crc.update(lib);
        return lib.length > 0 && lib.length == entry.getSize() && crc.getValue() == entry.getCrc() ? lib : null;
    }

    /** What identifies the driver's jar as the one a manifest's check was made against. */
    private static String jarIdentity() throws IOException {
        try {
            Path jar = Path.of(SQLiteJDBCLoader.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            // java.io's stat: the size and time in ms, without the conversions of NIO's times.
            File file = jar.toFile();
            return jar + " " + file.length() + " " + file.lastModified();
        } catch (URISyntaxException | NullPointerException e) {
            throw new IOException("the driver's jar is not known: " + e, e);
        }
    }

    /** What identifies a library file: a copy, a rename or a rewrite changes it. */
    private static String identity(Map<String, Object> a) {
        return a.get("dev") + " " + a.get("ino") + " " + a.get("size") + " "
                + ((FileTime) a.get("lastModifiedTime")).to(TimeUnit.NANOSECONDS) + " "
                + ((FileTime) a.get("ctime")).to(TimeUnit.NANOSECONDS);
    }

    private static Map<String, String> readManifest(Path manifest) throws IOException {
        byte[] bytes;
        // java.io, not NIO's channels (some forty classes more for every hook start). The manifest was just
        // found, without following links, to be a regular file of this user's in a directory only this user
        // can write: only this user could put a link in its place before this open.
        try (InputStream in = new FileInputStream(manifest.toFile())) {
            bytes = in.readNBytes(8192);
        }
        Map<String, String> m = new HashMap<>();
        for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
            int space = line.indexOf(' ');
            if (space > 0) {
                m.put(line.substring(0, space), line.substring(space + 1));
            }
        }
        return m;
    }

    private static boolean trustedFile(Map<String, Object> a, int me) {
        return type(a) == S_IFREG && uid(a) == me && !writableByOthers(a);
    }

    private static boolean writableByOthers(Map<String, Object> a) {
        return (mode(a) & 0022) != 0;
    }

    /** For a refusal's message only: the owner's name costs a passwd lookup. */
    private static String describe(Path p) throws IOException {
        return "owned by " + Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName() + ", mode "
                + PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    /**
     * The file's {@code lstat}, through the JDK's {@code unix} attribute view: its owner as a number, where
     * {@link java.nio.file.attribute.PosixFileAttributes#owner} looks the name up in the passwd table on
     * every call, which a hook would pay for each file checked.
     */
    private static Map<String, Object> lstat(Path p) throws IOException {
        return Files.readAttributes(p, ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
    }

    private static final String ATTRIBUTES = "unix:mode,uid,dev,ino,size,lastModifiedTime,ctime";
    private static final int S_IFMT = 0170000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFLNK = 0120000;

    private static int mode(Map<String, Object> a) {
        return (Integer) a.get("mode");
    }

    private static int type(Map<String, Object> a) {
        return mode(a) & S_IFMT;
    }

    private static int uid(Map<String, Object> a) {
        return (Integer) a.get("uid");
    }

    private static void replace(Path tmp, Path target) throws IOException {
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JDK", e);
        }
    }

    /**
     * Loads the verified library and tells the driver's loader it is loaded, as its own loading would. Its
     * first {@code initialize()} would otherwise start by cleaning up libraries it extracted before, which
     * lists the temporary directory for names carrying the driver's version, read from a resource: that
     * opens and indexes the whole fence jar, milliseconds of every SQLite hook, which otherwise reads
     * nothing from the jar. A driver without that private field (another version) is left to load it
     * itself, from the path {@link #setDriverLibraryProperties} gave it; {@code SqliteNativeTest} checks
     * the field is there.
     */
    private static void loadAsTheDriverWould(Path library) {
        Field extracted;
        try {
            extracted = SQLiteJDBCLoader.class.getDeclaredField(LOADED_FIELD);
            if (extracted.getType() != boolean.class || !Modifier.isStatic(extracted.getModifiers())) {
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
}
