package dev.fence.core;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** The JDK's digests ({@link Digests#jce()}): a {@code MessageDigest} or {@code Mac} per call. */
final class JceDigests implements Digests {
    static final JceDigests INSTANCE = new JceDigests();

    private JceDigests() {}

    @Override
    public byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (GeneralSecurityException e) {
            throw new InternalException("this JDK offers no SHA-256: " + e.getMessage(), e);
        }
    }

    @Override
    public byte[] hmacSha256(byte[] key, byte[] message) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(message);
        } catch (GeneralSecurityException e) {
            throw new InternalException("this JDK offers no HmacSHA256: " + e.getMessage(), e);
        }
    }
}
