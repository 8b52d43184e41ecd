package dev.fence.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Reads resources straight from the jar that holds a class, with {@link ZipFile}. {@code
 * getResourceAsStream} goes through a {@code jar:} URL connection, which opens the jar a second time as a
 * {@code JarFile}: its manifest is parsed and, the fence jar being multi-release, the names of all its
 * entries are scanned for versioned ones, several milliseconds that a one-shot hook process would pay on
 * every push for a few kilobytes of SQL or Lua. Outside a jar (tests run from class directories), or on
 * any problem, the class loader is asked as usual.
 */
public final class JarResources {
    private JarResources() {}

    /** The size and CRC-32 of a resource as the jar's directory records them. */
    public record Entry(long size, long crc) {}

    /**
     * The bytes of {@code name} (a path inside the jar, without a leading slash), from the jar that holds
     * {@code anchor}; null when there is no such resource.
     */
    public static byte[] read(Class<?> anchor, String name) throws IOException {
        ZipFile zip = zipOf(anchor);
        if (zip != null) {
            try {
                ZipEntry e = zip.getEntry(name);
                if (e != null) {
                    try (InputStream in = zip.getInputStream(e)) {
                        return in.readAllBytes();
                    }
                }
            } catch (IOException | RuntimeException e) {
                // fall through to the class loader
            }
        }
        try (InputStream in = anchor.getResourceAsStream("/" + name)) {
            return in == null ? null : in.readAllBytes();
        }
    }

    /** The recorded size and CRC-32 of {@code name} in the jar that holds {@code anchor}, or null. */
    public static Entry entry(Class<?> anchor, String name) {
        ZipFile zip = zipOf(anchor);
        if (zip == null) {
            return null;
        }
        try {
            ZipEntry e = zip.getEntry(name);
            return e == null || e.getSize() < 0 || e.getCrc() < 0 ? null : new Entry(e.getSize(), e.getCrc());
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Jars opened so far, kept open for the life of the process: each open reads the jar's whole directory. */
    private static final Map<Path, ZipFile> OPEN = new ConcurrentHashMap<>();

    private static ZipFile zipOf(Class<?> anchor) {
        Path jar = jarOf(anchor);
        if (jar == null) {
            return null;
        }
        try {
            return OPEN.computeIfAbsent(jar, p -> {
                try {
                    return new ZipFile(p.toFile());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            return null;
        }
    }

    /** The jar file {@code anchor} was loaded from, or null (a directory, or unknown). */
    public static Path jarOf(Class<?> anchor) {
        try {
            CodeSource source = anchor.getProtectionDomain().getCodeSource();
            URL location = source == null ? null : source.getLocation();
            if (location == null || !"file".equals(location.getProtocol())) {
                return null;
            }
            Path p = Path.of(location.toURI());
            return Files.isRegularFile(p) ? p : null;
        } catch (URISyntaxException | RuntimeException e) {
            return null;
        }
    }
}
