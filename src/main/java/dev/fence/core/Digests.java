package dev.fence.core;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * SHA-256 and HMAC-SHA256 (RFC 2104), as fence uses them: the MAC of {@link Proofs}, the names of a
 * repository's record files. {@link #jce()} is the JDK's; a caller may pass another implementation of the
 * same functions (the hook process does, see {@code dev.fence.hookpath.PlainDigests}). Implementations are
 * thread-safe and compute exactly these functions: a proof issued under one verifies under any other.
 */
public interface Digests {
    /** The SHA-256 digest of {@code data}. */
    byte[] sha256(byte[] data);

    /** The HMAC-SHA256 of {@code message} under {@code key} (a non-empty key). */
    byte[] hmacSha256(byte[] key, byte[] message);

    /** The SHA-256 of {@code text} in UTF-8, as 64 lower-case hex digits. */
    default String sha256Hex(String text) {
        return HexFormat.of().formatHex(sha256(text.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The JCE's: a {@code MessageDigest} or {@code Mac} per call. A JDK without SHA-256 or HmacSHA256 is
     * broken, not a reason to compute anything else: {@link InternalException}.
     */
    static Digests jce() {
        return JceDigests.INSTANCE;
    }
}
