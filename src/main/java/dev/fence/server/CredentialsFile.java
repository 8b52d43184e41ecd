package dev.fence.server;

import dev.fence.core.ConfigException;
import dev.fence.core.InvalidInputException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The credentials file of {@code fence serve}: who may call the API, with which role, and (for agents)
 * as which lease holders. Secrets are never stored, only their SHA-256.
 *
 * <h2>Format</h2>
 *
 * UTF-8 text, one credential per line, fields separated by spaces:
 *
 * <pre>
 * # name   role    secret hash                 holders (agents only, optional)
 * gitlab   hook    sha256:9f86d081884c7d65…
 * agent-a  agent   sha256:60303ae22b998861…    agent-a,agent-a/*
 * ops      admin   sha256:fd61a03af4f77d87…
 * </pre>
 *
 * <ul>
 *   <li>{@code name}: 1–64 of {@code A-Z a-z 0-9 . _ -}; unique in the file;
 *   <li>{@code role}: {@code hook}, {@code agent}, {@code auditor} or {@code admin};
 *   <li>{@code sha256:<64 hex digits>}: the SHA-256 of the secret's UTF-8 bytes. Secrets are 256-bit
 *       random values made by {@link #add}, so a plain hash is enough (no salt or key stretching needed);
 *   <li>holders: comma-separated globs of holder names an {@code agent} may act as ({@code *} within a
 *       path segment, {@code **} across); without it, an agent acts only as its own name.
 * </ul>
 *
 * Blank lines and lines starting with {@code #} are ignored. The bearer token a client sends is {@code
 * <name>:<secret>}.
 *
 * <p>Writes ({@link #add}, {@link #revoke}) replace the file atomically with mode 600, so a running server
 * never reads half a file; it notices the new file by its inode, size and modification time.
 */
public final class CredentialsFile {
    /** Valid credential names. */
    public static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /** Valid secrets: what {@link #add} makes (43 base64url characters), or anything of 32–128 such characters. */
    public static final Pattern SECRET = Pattern.compile("[A-Za-z0-9_-]{32,128}");

    private static final String HASH_PREFIX = "sha256:";
    private static final String HEADER =
            "# fence serve credentials: name role sha256:<hash of the secret> [holder-globs]\n"
                    + "# Written by 'fence serve credentials add/revoke'. Secrets are not stored; keep this file private.\n";

    private CredentialsFile() {}

    /**
     * Reads and checks a credentials file.
     *
     * @throws ConfigException naming the file and line of the first problem
     */
    public static Map<String, Credential> read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
            requireNotWritableByOthers(file);
        } catch (IOException e) {
            throw new ConfigException("credentials file " + file + ": cannot read it: " + e.getMessage(), e);
        }
        return parse(file.toString(), text);
    }

    /**
     * Refuses a file its group or others may write: whoever can write it can add a credential of any role
     * (its hashes are no secret; its lines are the server's list of who may do what).
     */
    private static void requireNotWritableByOthers(Path file) throws IOException {
        java.nio.file.attribute.PosixFileAttributeView view =
                Files.getFileAttributeView(file, java.nio.file.attribute.PosixFileAttributeView.class);
        if (view == null) {
            return;
        }
        java.util.Set<java.nio.file.attribute.PosixFilePermission> mode =
                view.readAttributes().permissions();
        if (mode.contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE)
                || mode.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE)) {
            throw new ConfigException("credentials file " + file + " may be written by its group or by others ("
                    + PosixFilePermissions.toString(mode) + "): whoever can write it can add a credential of any"
                    + " role. chmod 600 it (640 for a group that only reads)");
        }
    }

    /** Parses the file's text; {@code where} names it in messages. */
    static Map<String, Credential> parse(String where, String text) {
        Map<String, Credential> out = new LinkedHashMap<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String at = where + ":" + (i + 1);
            String[] f = line.split("[ \t]+");
            if (f.length < 3 || f.length > 4) {
                throw new ConfigException(at + ": expected 'name role sha256:<hash> [holders]'");
            }
            if (!NAME.matcher(f[0]).matches()) {
                throw new ConfigException(at + ": credential name must be 1-64 of A-Z a-z 0-9 . _ -");
            }
            Role role;
            try {
                role = Role.parse(f[1]);
            } catch (InvalidInputException e) {
                throw new ConfigException(at + ": " + e.getMessage());
            }
            if (!f[2].startsWith(HASH_PREFIX) || f[2].length() != HASH_PREFIX.length() + 64) {
                throw new ConfigException(at + ": the hash must be sha256: and 64 hex digits");
            }
            byte[] hash;
            try {
                hash = HexFormat.of().parseHex(f[2].substring(HASH_PREFIX.length()));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(at + ": the hash must be sha256: and 64 hex digits");
            }
            List<String> holders = List.of();
            if (f.length == 4) {
                if (role != Role.AGENT) {
                    throw new ConfigException(at + ": only agent credentials name holders");
                }
                holders = List.of(f[3].split(","));
                if (holders.stream().anyMatch(String::isEmpty)) {
                    throw new ConfigException(at + ": empty holder glob; separate globs with single commas");
                }
            }
            if (out.put(f[0], new Credential(f[0], role, hash, holders)) != null) {
                throw new ConfigException(at + ": credential '" + f[0] + "' is defined twice");
            }
        }
        return out;
    }

    /**
     * Adds a credential with a fresh random secret and returns the bearer token ({@code name:secret}),
     * which exists nowhere else: the file keeps only its hash. Creates the file (mode 600) if missing.
     *
     * @param holders holder globs for an agent (may be empty)
     * @throws InvalidInputException for a bad name, a name already present, or holders on a non-agent
     * @throws ConfigException when the file cannot be read or written
     */
    public static String add(Path file, String name, Role role, List<String> holders, SecureRandom random) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new InvalidInputException("--name must be 1-64 of A-Z a-z 0-9 . _ -");
        }
        if (!holders.isEmpty() && role != Role.AGENT) {
            throw new InvalidInputException("--holder applies only to agent credentials");
        }
        for (String h : holders) {
            if (h.isEmpty() || h.contains(",") || h.chars().anyMatch(c -> c <= ' ')) {
                throw new InvalidInputException("--holder '" + h + "': a glob without spaces or commas");
            }
        }
        Map<String, Credential> current = Files.exists(file) ? read(file) : new LinkedHashMap<>();
        if (current.containsKey(name)) {
            throw new InvalidInputException(
                    "credential '" + name + "' already exists in " + file + "; revoke it first to replace it");
        }
        byte[] raw = new byte[32];
        random.nextBytes(raw);
        String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
        current.put(name, new Credential(name, role, hash(secret), holders));
        write(file, current);
        return name + ":" + secret;
    }

    /**
     * Removes a credential.
     *
     * @return false when there was none of that name (the file is then unchanged)
     */
    public static boolean revoke(Path file, String name) {
        if (!Files.exists(file)) {
            return false;
        }
        Map<String, Credential> current = read(file);
        if (current.remove(name) == null) {
            return false;
        }
        write(file, current);
        return true;
    }

    /** SHA-256 of the secret's UTF-8 bytes. */
    public static byte[] hash(String secret) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }

    /** The file's text for {@code credentials}. */
    static String format(Map<String, Credential> credentials) {
        StringBuilder out = new StringBuilder(HEADER);
        for (Credential c : credentials.values()) {
            out.append(c.name())
                    .append(' ')
                    .append(c.role().label())
                    .append(' ')
                    .append(HASH_PREFIX)
                    .append(HexFormat.of().formatHex(c.hash()));
            if (!c.holders().isEmpty()) {
                out.append(' ').append(String.join(",", c.holders()));
            }
            out.append('\n');
        }
        return out.toString();
    }

    private static void write(Path file, Map<String, Credential> credentials) {
        Path abs = file.toAbsolutePath();
        Path dir = abs.getParent();
        Path tmp = null;
        try {
            if (dir != null) {
                Files.createDirectories(dir);
            }
            tmp = Files.createTempFile(
                    dir,
                    "." + abs.getFileName() + ".",
                    ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, format(credentials), StandardCharsets.UTF_8);
            try {
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
        } catch (FileAlreadyExistsException e) {
            throw new ConfigException("credentials file " + abs + ": " + e, e);
        } catch (IOException e) {
            throw new ConfigException("credentials file " + abs + ": cannot write it: " + e.getMessage(), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    // A stray temporary file is harmless.
                }
            }
        }
    }

    /** Lists the credentials' names, roles and holders (never hashes), one per line. */
    public static List<String> describe(Path file) {
        List<String> out = new ArrayList<>();
        if (!Files.exists(file)) {
            return out;
        }
        for (Credential c : read(file).values()) {
            out.add(c.name() + " " + c.role().label()
                    + (c.holders().isEmpty() ? "" : " " + String.join(",", c.holders())));
        }
        return out;
    }
}
