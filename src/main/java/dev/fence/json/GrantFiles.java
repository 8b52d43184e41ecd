package dev.fence.json;

import dev.fence.core.ConfigException;
import dev.fence.core.Digests;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Grant files: a grant, proof included, as {@code fence lease acquire --json} prints it, in a file only
 * its owner can read (mode 0600, in a directory fence creates with mode 0700), replaced whole so that a
 * reader never sees half a grant. {@code fence lease acquire --grant-file FILE} writes one and every
 * command that acts under a grant reads it; a directory of them ({@code --grants DIR}) is where {@code
 * fence mcp} keeps the grants it takes and where the Claude Code heartbeat finds the proofs it renews
 * with.
 *
 * <p>The proof is a bearer credential: whoever can read the file can act as the holder on that grant.
 */
public final class GrantFiles {
    /** How the name of a grant file in a directory of them ends. */
    public static final String SUFFIX = ".grant";

    private GrantFiles() {}

    /**
     * Writes {@code g} (proof included) to {@code file}, readable by this user only, replacing it whole.
     *
     * @throws ConfigException when it cannot be written
     */
    public static void write(Path file, Grant g) {
        Path abs = file.toAbsolutePath();
        try {
            Path dir = abs.getParent();
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(
                        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            Path tmp = Files.createTempFile(
                    dir,
                    ".grant-",
                    ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(tmp, Json.write(Json.grant(g)) + "\n");
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new ConfigException("cannot write the grant file " + file + ": " + e.getMessage(), e);
        }
    }

    /** Larger than any grant fence writes (names are at most 512 characters): not a grant file. */
    private static final long MAX_GRANT_BYTES = 64 * 1024;

    /**
     * Reads the grant in {@code file}.
     *
     * @throws InvalidInputException when there is no such file or it is not a grant
     */
    public static Grant read(Path file) {
        String text;
        try {
            if (Files.size(file) > MAX_GRANT_BYTES) {
                throw new InvalidInputException(file + " is larger than a grant file (" + MAX_GRANT_BYTES + " bytes)");
            }
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new InvalidInputException("no grant file " + file + " (write it with 'fence lease acquire ..."
                    + " --grant-file " + file + "')");
        } catch (IOException e) {
            throw new InvalidInputException("cannot read the grant file " + file + ": " + e.getMessage());
        }
        Grant g;
        try {
            g = Json.parseGrant(text);
        } catch (InvalidInputException e) {
            // Not the parser's words: they quote the file's text, which may be anything a path names.
            throw new InvalidInputException(
                    file + " is not a grant file (the JSON 'fence lease acquire" + " --grant-file' writes)");
        }
        if (g.resource() == null || g.holder() == null || g.token() <= 0) {
            throw new InvalidInputException(file + " is not a grant written by 'fence lease acquire --grant-file'");
        }
        return g;
    }

    /**
     * The grants kept in a directory.
     *
     * @param grants every {@code *.grant} file that reads as a grant
     * @param unreadable why each other {@code *.grant} file was skipped, one sentence each
     */
    public record Kept(List<Grant> grants, List<String> unreadable) {
        public Kept {
            grants = List.copyOf(grants);
            unreadable = List.copyOf(unreadable);
        }

        /** None. */
        public static Kept none() {
            return new Kept(List.of(), List.of());
        }

        /** The kept grant of {@code (resource, holder, token)}, or null. */
        public Grant find(String resource, String holder, long token) {
            for (Grant g : grants) {
                if (g.token() == token
                        && g.resource().equals(resource)
                        && g.holder().equals(holder)) {
                    return g;
                }
            }
            return null;
        }
    }

    /**
     * Every grant kept in {@code dir}: its {@code *.grant} files, whatever their names (so {@code fence lease
     * acquire --grant-file DIR/NAME.grant} adds one). A file that cannot be read is reported, not thrown:
     * one bad file must not hide the others. A directory that does not exist keeps none.
     *
     * @throws ConfigException when the directory exists but cannot be listed
     */
    public static Kept readDir(Path dir) {
        if (!Files.isDirectory(dir)) {
            return Kept.none();
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(f -> f.getFileName().toString().endsWith(SUFFIX))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new ConfigException("cannot list the grants in " + dir + ": " + e.getMessage(), e);
        }
        List<Grant> grants = new ArrayList<>();
        List<String> unreadable = new ArrayList<>();
        for (Path f : files) {
            // Only files kept here: a link could point anywhere (and its target's text would be quoted in
            // the parse error), a FIFO would block the reading hook for good.
            if (!Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
                unreadable.add(f + " is not a regular file; kept grants are files 'fence mcp --grants' writes");
                continue;
            }
            try {
                grants.add(read(f));
            } catch (InvalidInputException e) {
                unreadable.add(e.getMessage());
            }
        }
        return new Kept(grants, unreadable);
    }

    /**
     * Keeps {@code g} in {@code dir} under a name made from its resource, replacing the grant kept there
     * for the same resource.
     *
     * @return the file
     * @throws ConfigException when it cannot be written
     */
    public static Path keep(Path dir, Grant g) {
        Path file = dir.resolve(fileName(g.resource()));
        write(file, g);
        return file;
    }

    /**
     * Deletes every grant file in {@code dir} that holds {@code (resource, holder, token)}: a grant that is
     * released or lost proves nothing any more, and is not left lying about.
     *
     * @throws ConfigException when a file cannot be deleted
     */
    public static void forget(Path dir, String resource, String holder, long token) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(f -> f.getFileName().toString().endsWith(SUFFIX)).toList();
        } catch (IOException e) {
            throw new ConfigException("cannot list the grants in " + dir + ": " + e.getMessage(), e);
        }
        for (Path f : files) {
            Grant g;
            try {
                g = read(f);
            } catch (InvalidInputException e) {
                continue;
            }
            if (g.token() == token
                    && g.resource().equals(resource)
                    && g.holder().equals(holder)) {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException e) {
                    throw new ConfigException("cannot delete the grant file " + f + ": " + e.getMessage(), e);
                }
            }
        }
    }

    /**
     * A file name for {@code resource}'s grant: readable where the name allows, and unique by a digest of
     * the whole name (resource names may hold {@code /}, {@code :} and run to 512 characters).
     */
    static String fileName(String resource) {
        String readable = resource.replaceAll("[^A-Za-z0-9._-]", "_");
        if (readable.length() > 64) {
            readable = readable.substring(0, 64);
        }
        return readable + "-" + Digests.jce().sha256Hex(resource).substring(0, 16) + SUFFIX;
    }
}
