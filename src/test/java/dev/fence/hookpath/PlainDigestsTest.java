package dev.fence.hookpath;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.fence.core.Digests;
import dev.fence.core.Identities;
import dev.fence.core.Proofs;
import dev.fence.core.StoreIdentity;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The hook path's digests are the JCE's functions, byte for byte. */
class PlainDigestsTest {
    @Test
    void sha256IsTheJdksForEveryLengthAroundTheBlockBoundaries() throws Exception {
        java.util.Random random = new java.util.Random(7);
        for (int length = 0; length <= 300; length++) {
            byte[] data = new byte[length];
            random.nextBytes(data);
            byte[] expected = java.security.MessageDigest.getInstance("SHA-256").digest(data);
            assertEquals(
                    java.util.HexFormat.of().formatHex(expected),
                    java.util.HexFormat.of().formatHex(PlainDigests.INSTANCE.sha256(data)),
                    length + " bytes");
        }
        assertEquals(
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                java.util.HexFormat.of()
                        .formatHex(PlainDigests.INSTANCE.sha256(
                                "abc".getBytes(java.nio.charset.StandardCharsets.US_ASCII))));
    }

    @Test
    void theHmacIsTheJcesHmacSha256ForEveryKeyAndMessageLength() throws Exception {
        java.util.Random random = new java.util.Random(42);
        for (int keyLength : new int[] {0, 1, 31, 32, 63, 64, 65, 100, 200}) {
            for (int messageLength : new int[] {0, 1, 55, 56, 63, 64, 65, 119, 120, 1000}) {
                byte[] key = new byte[keyLength];
                byte[] message = new byte[messageLength];
                random.nextBytes(key);
                random.nextBytes(message);
                javax.crypto.Mac jce = javax.crypto.Mac.getInstance("HmacSHA256");
                // The JCE refuses an empty key; HMAC itself pads it with zeros like any short key.
                jce.init(new javax.crypto.spec.SecretKeySpec(keyLength == 0 ? new byte[1] : key, "HmacSHA256"));
                byte[] expected = jce.doFinal(message);
                byte[] got = PlainDigests.INSTANCE.hmacSha256(keyLength == 0 ? new byte[1] : key, message);
                assertEquals(
                        java.util.HexFormat.of().formatHex(expected),
                        java.util.HexFormat.of().formatHex(got),
                        "key " + keyLength + " bytes, message " + messageLength + " bytes");
            }
        }
    }

    @Test
    void proofsAndRecordNamesAreTheSameWithEitherDigests() {
        StoreIdentity id = Identities.candidate(Instant.parse("2026-11-29T00:00:00Z"));
        Proofs plain = new Proofs(PlainDigests.INSTANCE);
        String proof = plain.issue(id, "git:app:refs/heads/main", 34, "agent-a");
        assertEquals(Proofs.standard().issue(id, "git:app:refs/heads/main", 34, "agent-a"), proof);
        assertEquals(Proofs.Check.VALID, plain.verify(id, "git:app:refs/heads/main", 34, proof));
        assertEquals(
                Digests.jce().sha256Hex("git:app:refs/heads/main"),
                PlainDigests.INSTANCE.sha256Hex("git:app:refs/heads/main"));
    }
}
