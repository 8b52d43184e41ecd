package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class ProofsTest {
    private final StoreIdentity id = Identities.candidate(Instant.parse("2026-11-29T00:00:00Z"));

    @Test
    void aProofIsBoundToResourceTokenAndGeneration() {
        String proof = Proofs.issue(id, "db/migrations", 34, "agent-a");
        assertTrue(Proofs.isWellFormed(proof));
        assertEquals(Proofs.Check.VALID, Proofs.verify(id, "db/migrations", 34, proof));
        assertEquals(Proofs.Check.BAD, Proofs.verify(id, "db/migrations", 33, proof), "not a proof of another token");
        assertEquals(Proofs.Check.BAD, Proofs.verify(id, "db/other", 34, proof), "not a proof of another resource");
        StoreIdentity next = Identities.candidate(Instant.parse("2026-11-29T01:00:00Z"));
        assertEquals(Proofs.Check.OLD_GENERATION, Proofs.verify(next, "db/migrations", 34, proof));
    }

    @Test
    void sha256IsTheJdksForEveryLengthAroundTheBlockBoundaries() throws Exception {
        java.util.Random random = new java.util.Random(7);
        for (int length = 0; length <= 300; length++) {
            byte[] data = new byte[length];
            random.nextBytes(data);
            byte[] expected = java.security.MessageDigest.getInstance("SHA-256").digest(data);
            assertEquals(
                    java.util.HexFormat.of().formatHex(expected),
                    java.util.HexFormat.of().formatHex(Sha256.digest(data)),
                    length + " bytes");
        }
        assertEquals(
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                java.util.HexFormat.of()
                        .formatHex(Sha256.digest("abc".getBytes(java.nio.charset.StandardCharsets.US_ASCII))));
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
                byte[] got = Proofs.hmacSha256(keyLength == 0 ? new byte[1] : key, message);
                assertEquals(
                        java.util.HexFormat.of().formatHex(expected),
                        java.util.HexFormat.of().formatHex(got),
                        "key " + keyLength + " bytes, message " + messageLength + " bytes");
            }
        }
    }

    @Test
    void proofsAreTheSameWhicheverWayTheMacIsComputed() {
        String first = Proofs.issue(id, "db/migrations", 34, "agent-a");
        for (int i = 0; i < 200; i++) {
            assertEquals(first, Proofs.issue(id, "db/migrations", 34, "agent-a"), "MAC number " + i);
        }
    }

    @Test
    void aForgedOrMalformedProofIsRefused() {
        String forged = "fp2." + id.generation() + ".YWdlbnQtYQ." + "A".repeat(43);
        assertEquals(Proofs.Check.BAD, Proofs.verify(id, "r", 1, forged));
        String firstFormat = "fp1." + id.generation() + "." + "A".repeat(43);
        assertEquals(
                Proofs.Check.OLD_FORMAT, Proofs.verify(id, "r", 1, firstFormat), "proofs that name no holder are void");
        assertFalse(Proofs.isWellFormed("34"));
        String mac = "A".repeat(43);
        assertTrue(Proofs.isWellFormed("fp1.g." + mac));
        assertTrue(Proofs.isWellFormed("fp1." + "g".repeat(64) + "." + mac));
        for (String bad : new String[] {
            null,
            "",
            "fp1." + mac,
            "fp1.." + mac,
            "fp2.g." + mac,
            "fp1.g." + "A".repeat(42),
            "fp1.g." + "A".repeat(44),
            "fp1." + "g".repeat(65) + "." + mac,
            "fp1.g+." + mac,
            "fp1.g." + "A".repeat(42) + "=",
            "fp1.g.h." + mac,
        }) {
            assertFalse(Proofs.isWellFormed(bad), String.valueOf(bad));
        }
        var e = assertThrows(InvalidInputException.class, () -> Proofs.verify(id, "r", 1, "fp1.secret-looking"));
        assertFalse(e.getMessage().contains("secret-looking"), "the message never echoes the proof");
    }

    @Test
    void identitiesAreFreshAndStartAtTheirCreationTime() {
        Instant t = Instant.parse("2026-11-29T00:00:00Z");
        StoreIdentity a = Identities.candidate(t);
        StoreIdentity b = Identities.candidate(t);
        assertFalse(a.generation().equals(b.generation()));
        assertEquals(t.toEpochMilli(), a.floor());
        assertFalse(a.toString().contains("proofKey"), "the key is never printed");
    }
}
