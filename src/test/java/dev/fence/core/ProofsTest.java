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
        String proof = Proofs.standard().issue(id, "db/migrations", 34, "agent-a");
        assertTrue(Proofs.isWellFormed(proof));
        assertEquals(Proofs.Check.VALID, Proofs.standard().verify(id, "db/migrations", 34, proof));
        assertEquals(
                Proofs.Check.BAD,
                Proofs.standard().verify(id, "db/migrations", 33, proof),
                "not a proof of another token");
        assertEquals(
                Proofs.Check.BAD,
                Proofs.standard().verify(id, "db/other", 34, proof),
                "not a proof of another resource");
        StoreIdentity next = Identities.candidate(Instant.parse("2026-11-29T01:00:00Z"));
        assertEquals(Proofs.Check.OLD_GENERATION, Proofs.standard().verify(next, "db/migrations", 34, proof));
    }

    @Test
    void aProofIssuedWithOneImplementationOfTheMacVerifiesWithAnother() {
        Digests another = new Digests() {
            @Override
            public byte[] sha256(byte[] data) {
                return Digests.jce().sha256(data);
            }

            @Override
            public byte[] hmacSha256(byte[] key, byte[] message) {
                return Digests.jce().hmacSha256(key, message);
            }
        };
        String proof = new Proofs(another).issue(id, "db/migrations", 34, "agent-a");
        assertEquals(proof, Proofs.standard().issue(id, "db/migrations", 34, "agent-a"));
        assertEquals(Proofs.Check.VALID, Proofs.standard().verify(id, "db/migrations", 34, proof));
    }

    @Test
    void aJdkWithoutTheMacIsAnErrorNotAnotherMac() {
        Digests broken = new Digests() {
            @Override
            public byte[] sha256(byte[] data) {
                throw new InternalException("no SHA-256");
            }

            @Override
            public byte[] hmacSha256(byte[] key, byte[] message) {
                throw new InternalException("no HmacSHA256");
            }
        };
        assertThrows(InternalException.class, () -> new Proofs(broken).issue(id, "db/migrations", 34, "agent-a"));
    }

    @Test
    void aForgedOrMalformedProofIsRefused() {
        String forged = "fp2." + id.generation() + ".YWdlbnQtYQ." + "A".repeat(43);
        assertEquals(Proofs.Check.BAD, Proofs.standard().verify(id, "r", 1, forged));
        String firstFormat = "fp1." + id.generation() + "." + "A".repeat(43);
        assertEquals(
                Proofs.Check.OLD_FORMAT,
                Proofs.standard().verify(id, "r", 1, firstFormat),
                "proofs that name no holder are void");
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
        var e = assertThrows(
                InvalidInputException.class, () -> Proofs.standard().verify(id, "r", 1, "fp1.secret-looking"));
        assertFalse(e.getMessage().contains("secret-looking"), "the message never echoes the proof");
    }

    @Test
    void identitiesAreFreshAndStartAtTheirCreationTime() {
        Instant t = Instant.parse("2026-11-29T00:00:00Z");
        StoreIdentity a = Identities.candidate(t);
        StoreIdentity b = Identities.candidate(t);
        assertFalse(a.generation().equals(b.generation()));
        assertEquals(t.toEpochMilli() * 1000, a.floor(), "in microseconds");
        assertFalse(a.toString().contains("proofKey"), "the key is never printed");
    }
}
