package dev.fence.server;

import dev.fence.core.ConfigException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The server's live view of its credentials file: checks credentials (bearer tokens, or HTTP Basic
 * carrying the same name and secret for browsers), and re-reads the file whenever
 * its inode, size or modification time changes, so that a revoked credential stops working at the next
 * request without a restart.
 *
 * <p>A file that becomes unreadable or invalid fails closed: every authenticated request is answered 503
 * until it is fixed (the error is logged once per change). Thread-safe.
 */
final class Credentials {
    /** Compared against when a name is unknown, so that unknown and known names take the same time. */
    private static final byte[] DUMMY = CredentialsFile.hash("fence-dummy-secret-for-constant-time");

    private final Path file;
    private final Consumer<String> log;
    private Object stamp;
    private Map<String, Credential> byName;
    private String broken;

    /**
     * @throws ConfigException when the file cannot be read or is invalid at start
     */
    Credentials(Path file, Consumer<String> log) {
        this.file = file;
        this.log = log;
        this.stamp = stamp(file);
        this.byName = CredentialsFile.read(file);
    }

    /** How many credentials are loaded (for the start-up line). */
    synchronized int size() {
        return byName.size();
    }

    /** Null when the file is usable, else what is wrong with it. */
    synchronized String problem() {
        refresh();
        return broken;
    }

    /**
     * The credential {@code authorization} (an {@code Authorization} header value) proves.
     *
     * @param basic whether HTTP Basic is taken: only on the pages browsers call. A browser sends a Basic
     *     credential it was given to every path of the server by itself, also for another site's form
     *     (cross-site request forgery); the API takes only the bearer header, which no other site can make
     *     a browser send.
     * @throws HttpError 401 without a valid bearer (or, with {@code basic}, Basic) credential, 503 when the
     *     file is broken
     */
    Credential authenticate(String authorization, boolean basic) {
        Map<String, Credential> current;
        synchronized (this) {
            refresh();
            if (broken != null) {
                throw new HttpError(503, "the server's credentials file is invalid; ask the operator to fix it");
            }
            current = byName;
        }
        if (authorization == null || authorization.isBlank()) {
            throw HttpError.unauthorized("no credential: send 'Authorization: Bearer <name>:<secret>'"
                    + (basic ? " (or HTTP Basic, name and secret)" : ""));
        }
        String token = nameAndSecret(authorization.strip(), basic);
        int colon = token.indexOf(':');
        String name = colon < 0 ? "" : token.substring(0, colon);
        String secret = colon < 0 ? token : token.substring(colon + 1);
        Credential c = current.get(name);
        byte[] given = CredentialsFile.hash(secret);
        boolean same = MessageDigest.isEqual(c == null ? DUMMY : c.hash(), given);
        if (c == null || !same) {
            // Never say which part was wrong, and never echo the token.
            throw HttpError.unauthorized("the credential is unknown, revoked or wrong");
        }
        return c;
    }

    /**
     * {@code <name>:<secret>} from a {@code Bearer} value, or from a {@code Basic} one (RFC 7617: base64
     * of user {@code name}, password {@code secret}), which is how a browser sends the same credential.
     */
    private static String nameAndSecret(String value, boolean basic) {
        if (value.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return value.substring(7).strip();
        }
        if (!basic) {
            throw HttpError.unauthorized("the Authorization header must be 'Bearer <name>:<secret>'; HTTP Basic is"
                    + " taken only by the /audit page");
        }
        if (value.regionMatches(true, 0, "Basic ", 0, 6)) {
            try {
                byte[] raw = Base64.getDecoder().decode(value.substring(6).strip());
                return StandardCharsets.UTF_8
                        .newDecoder()
                        .decode(ByteBuffer.wrap(raw))
                        .toString();
            } catch (IllegalArgumentException | CharacterCodingException e) {
                throw HttpError.unauthorized("the Basic credential is not base64 of UTF-8 '<name>:<secret>'");
            }
        }
        throw HttpError.unauthorized(
                "the Authorization header must be 'Bearer <name>:<secret>' or HTTP Basic with the name and secret");
    }

    private void refresh() {
        Object now = stamp(file);
        if (Objects.equals(now, stamp)) {
            return;
        }
        stamp = now;
        try {
            byName = CredentialsFile.read(file);
            if (broken != null) {
                log.accept("credentials file " + file + " is valid again (" + byName.size() + " credentials)");
            } else {
                log.accept("re-read credentials file " + file + " (" + byName.size() + " credentials)");
            }
            broken = null;
        } catch (ConfigException e) {
            broken = e.getMessage();
            log.accept("credentials file is invalid, refusing every authenticated request until it is fixed: "
                    + e.getMessage());
        }
    }

    private static Object stamp(Path file) {
        try {
            BasicFileAttributes a;
            Object mode;
            try {
                // The mode too: a chmod that opens the file to others changes neither its size nor its time.
                java.nio.file.attribute.PosixFileAttributes p =
                        Files.readAttributes(file, java.nio.file.attribute.PosixFileAttributes.class);
                a = p;
                mode = p.permissions();
            } catch (UnsupportedOperationException e) {
                a = Files.readAttributes(file, BasicFileAttributes.class);
                mode = "";
            }
            return java.util.List.of(
                    String.valueOf(a.fileKey()), a.size(), a.lastModifiedTime().toMillis(), a.lastModifiedTime(), mode);
        } catch (IOException e) {
            return "missing: " + e.getClass().getSimpleName();
        }
    }
}
