package dev.fence.hookpath;

import dev.fence.core.Digests;

/**
 * The digest seam of the hook path: SHA-256 ({@link Sha256}) and HMAC-SHA256 (RFC 2104) in plain Java,
 * the same bytes as the JCE's ({@code PlainDigestsTest} compares them). What it saves: a hook computes one
 * HMAC (the push's proof) and hashes a resource name or two (its record's file names), and the JCE's first
 * {@code Mac} or {@code MessageDigest} of a process starts the security-provider framework and reads the
 * crypto policy, several times the hook's own work on a small machine (bench: "Java hook, SQLite|Redis",
 * JDK 17 and 25). Long-running processes use the JCE's, whose SHA-256 the JIT backs with CPU instructions.
 */
public final class PlainDigests implements Digests {
    /** The digests. Stateless, thread-safe. */
    public static final PlainDigests INSTANCE = new PlainDigests();

    private static final int HMAC_BLOCK = 64;

    private PlainDigests() {}

    @Override
    public byte[] sha256(byte[] data) {
        return Sha256.digest(data);
    }

    @Override
    public byte[] hmacSha256(byte[] key, byte[] message) {
        byte[] block = new byte[HMAC_BLOCK];
        byte[] k = key.length > HMAC_BLOCK ? Sha256.digest(key) : key;
        System.arraycopy(k, 0, block, 0, k.length);
        byte[] pad = new byte[HMAC_BLOCK];
        for (int i = 0; i < HMAC_BLOCK; i++) {
            pad[i] = (byte) (block[i] ^ 0x36);
        }
        Sha256 inner = new Sha256();
        inner.update(pad);
        inner.update(message);
        byte[] innerDigest = inner.finish();
        for (int i = 0; i < HMAC_BLOCK; i++) {
            pad[i] = (byte) (block[i] ^ 0x5c);
        }
        Sha256 outer = new Sha256();
        outer.update(pad);
        outer.update(innerDigest);
        return outer.finish();
    }
}
