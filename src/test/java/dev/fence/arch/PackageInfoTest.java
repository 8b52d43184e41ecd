package dev.fence.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every fence package says, in its {@code package-info.java}, what it is and what it may depend on. */
class PackageInfoTest {
    @Test
    void everyPackageHasItsPackageInfo() throws IOException {
        Path root = Path.of("src/main/java/dev/fence");
        List<Path> packages;
        try (Stream<Path> dirs = Files.walk(root)) {
            packages = dirs.filter(Files::isDirectory)
                    .filter(PackageInfoTest::holdsClasses)
                    .toList();
        }
        assertTrue(packages.size() > 15, "found " + packages);
        List<Path> without = packages.stream()
                .filter(p -> !Files.isRegularFile(p.resolve("package-info.java")))
                .toList();
        assertEquals(List.of(), without, "packages without a package-info.java");
        for (Path p : packages) {
            String info = Files.readString(p.resolve("package-info.java"));
            assertTrue(info.contains("/**"), p + ": its package-info has no Javadoc");
        }
    }

    private static boolean holdsClasses(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.anyMatch(f -> f.toString().endsWith(".java"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
