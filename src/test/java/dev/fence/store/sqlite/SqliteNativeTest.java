package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteJDBCLoader;
import org.sqlite.core.DirectAccess;

/**
 * The native-library cache: what it loads is code run as this user, so each test plants what another user
 * (or an earlier, careless set-up) could have left there and checks that it is not loaded.
 */
class SqliteNativeTest {
    @TempDir
    Path home;

    private String resource;
    private Path dir;
    private String jarSha;

    @BeforeEach
    void setUp() throws Exception {
        resource = SqliteNative.resourceForThisPlatform();
        assumeTrue(resource != null, "fence caches the library on Linux x86_64 and aarch64 only");
        dir = home.resolve("fence").resolve("native");
        try (InputStream in = SQLiteJDBCLoader.class.getResourceAsStream(resource)) {
            jarSha = sha256(in.readAllBytes());
        }
    }

    private SqliteNative.Choice choose() {
        return SqliteNative.choose(dir, resource, DirectAccess.PATCHED_FOR);
    }

    /** Asserts the choice is a regular file in the cache holding exactly the driver's library. */
    private void assertTheDriversLibrary(SqliteNative.Choice c) throws Exception {
        assertNull(c.note());
        assertNotNull(c.library());
        assertEquals(dir, c.library().getParent());
        assertTrue(Files.isRegularFile(c.library(), LinkOption.NOFOLLOW_LINKS), "a regular file, not a link");
        assertEquals(jarSha, sha256(Files.readAllBytes(c.library())));
        assertEquals(me(), Files.getOwner(c.library(), LinkOption.NOFOLLOW_LINKS));
        assertEquals("r-x------", mode(c.library()));
    }

    private static UserPrincipal me() throws IOException {
        return FileSystems.getDefault()
                .getUserPrincipalLookupService()
                .lookupPrincipalByName(System.getProperty("user.name"));
    }

    @Test
    void makesItsDirectoryPrivateAndWritesTheDriversOwnLibrary() throws Exception {
        SqliteNative.Choice c = choose();
        assertTheDriversLibrary(c);
        assertTrue(c.hashed());
        assertEquals("rwx------", mode(dir));
        assertEquals("rw-------", mode(manifest()));
    }

    @Test
    void aLaterStartTrustsItsManifestAndReadsNothingFromTheJar() throws Exception {
        Path first = choose().library();
        SqliteNative.Choice again = choose();
        assertEquals(first, again.library());
        assertFalse(again.hashed(), "the recorded check is reused");
    }

    @Test
    void aLibraryPlantedUnderTheNameIsReplacedNotLoaded() throws Exception {
        Path library = choose().library();
        // A new file (another inode) where the checked one was: the manifest no longer describes it.
        Path junk = home.resolve("junk.so");
        Files.write(junk, "not the driver".getBytes(StandardCharsets.UTF_8));
        Files.setPosixFilePermissions(junk, PosixFilePermissions.fromString("r-x------"));
        Files.move(junk, library, StandardCopyOption.REPLACE_EXISTING);
        SqliteNative.Choice c = choose();
        assertTrue(c.hashed());
        assertTheDriversLibrary(c);
    }

    @Test
    void aLibraryPlantedBeforeTheFirstStartIsReplacedNotLoaded() throws Exception {
        Path library = choose().library();
        String name = library.getFileName().toString();
        Path fresh = home.resolve("other").resolve("native");
        Files.createDirectories(
                fresh, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.write(fresh.resolve(name), new byte[(int) Files.size(library)]);
        dir = fresh;
        assertTheDriversLibrary(choose());
    }

    @Test
    void aLibraryRewrittenInPlaceIsCheckedAgain() throws Exception {
        Path library = choose().library();
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rwx------"));
        Files.write(library, new byte[(int) Files.size(library)]);
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("r-x------"));
        Files.setLastModifiedTime(library, FileTime.fromMillis(0));
        SqliteNative.Choice c = choose();
        assertTrue(c.hashed());
        assertTheDriversLibrary(c);
    }

    @Test
    void aLibraryOthersCanWriteIsReplaced() throws Exception {
        Path library = choose().library();
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rwxrwxrwx"));
        SqliteNative.Choice c = choose();
        assertTrue(c.hashed());
        assertTheDriversLibrary(c);
    }

    @Test
    void aLibraryOfAnotherUserIsReplaced() throws Exception {
        UserPrincipal nobody = otherUser();
        Path library = choose().library();
        Files.setOwner(library, nobody);
        SqliteNative.Choice c = choose();
        assertTrue(c.hashed());
        assertTheDriversLibrary(c);
    }

    @Test
    void aLinkInPlaceOfTheLibraryIsNotFollowed() throws Exception {
        Path library = choose().library();
        // Even a link to a genuine copy: what is loaded must be the checked file itself.
        Path elsewhere = home.resolve("elsewhere.so");
        Files.copy(library, elsewhere);
        Files.delete(library);
        Files.createSymbolicLink(library, elsewhere);
        SqliteNative.Choice c = choose();
        assertTrue(c.hashed());
        assertTheDriversLibrary(c);
        assertTrue(Files.isRegularFile(elsewhere, LinkOption.NOFOLLOW_LINKS), "the link's target is left alone");
    }

    @Test
    void aLinkInPlaceOfTheManifestIsNotTrusted() throws Exception {
        choose();
        Path manifest = manifest();
        Path copy = home.resolve("manifest-copy");
        Files.copy(manifest, copy);
        Files.delete(manifest);
        Files.createSymbolicLink(manifest, copy);
        SqliteNative.Choice c = choose();
        assertTrue(c.hashed(), "a linked manifest is no record");
        assertTheDriversLibrary(c);
        assertTrue(Files.isRegularFile(manifest, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void aDirectoryOthersCanWriteIsNotUsed() throws Exception {
        choose();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        SqliteNative.Choice c = choose();
        assertNull(c.library(), "even the genuine library in it, which anyone could have swapped");
        assertTrue(c.note().contains("rwxrwxrwx") && c.note().contains(dir.toString()), c.note());
        assertTrue(c.note().contains("sqlite-jdbc extracts its own copy"), c.note());
        assertEquals("rwxrwxrwx", mode(dir), "not silently made private: its contents are suspect");
    }

    @Test
    void aLinkInPlaceOfTheDirectoryIsNotFollowed() throws Exception {
        Path real = home.resolve("real").resolve("native");
        Path wanted = dir;
        dir = real;
        choose();
        dir = wanted;
        Files.createDirectories(dir.getParent());
        Files.createSymbolicLink(dir, real);
        SqliteNative.Choice c = choose();
        assertNull(c.library());
        assertTrue(c.note().contains("symbolic link"), c.note());
    }

    @Test
    void aDirectoryOfAnotherUserIsNotUsed() throws Exception {
        UserPrincipal nobody = otherUser();
        choose();
        Files.setOwner(dir, nobody);
        SqliteNative.Choice c = choose();
        assertNull(c.library());
        assertTrue(c.note().contains(nobody.getName()), c.note());
    }

    @Test
    void aParentOthersCanWriteIsNotUsed() throws Exception {
        // Whoever can write the parent can swap the directory for one of theirs after it was checked.
        Files.createDirectories(dir.getParent());
        Files.setPosixFilePermissions(dir.getParent(), PosixFilePermissions.fromString("rwxrwxrwx"));
        SqliteNative.Choice c = choose();
        assertNull(c.library());
        assertFalse(Files.exists(dir), "nothing made in it");
    }

    @Test
    void anOlderCacheMadeWithTheUmaskIsMadePrivateAndKept() throws Exception {
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertTheDriversLibrary(choose());
        assertEquals("rwx------", mode(dir));
    }

    @Test
    void anotherDriverVersionLeavesLoadingToTheDriver() throws Exception {
        SqliteNative.Choice c = SqliteNative.choose(dir, resource, "0.0.1");
        assertNull(c.library());
        assertTrue(c.note().contains("0.0.1") && c.note().contains(SQLiteJDBCLoader.getVersion()), c.note());
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList(), "nothing cached for a driver the patch does not know");
        }
    }

    @Test
    void theDriversLoaderRecordsItsLibraryWhereFenceSetsIt() throws Exception {
        // Without the field fence still works (the driver loads its library itself) but every SQLite hook
        // opens the jar again: a driver upgrade that renames it must be noticed.
        Field loaded = SQLiteJDBCLoader.class.getDeclaredField(SqliteNative.LOADED_FIELD);
        assertEquals(boolean.class, loaded.getType());
        assertTrue(Modifier.isStatic(loaded.getModifiers()));
    }

    private Path manifest() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith("manifest-"))
                    .findFirst()
                    .orElseThrow();
        }
    }

    private static UserPrincipal otherUser() throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "only root can give a file to another user");
        return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
