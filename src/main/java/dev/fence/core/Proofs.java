package dev.fence.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * Proofs that a token was granted to a holder. A token number alone is no credential: FENCED messages and
 * the ledger show token numbers, so a push must also carry the grant's proof.
 *
 * <p>A proof is {@code fp2.<generation>.<holder>.<mac>}: {@code holder} is the unpadded base64url of the
 * holder's name (UTF-8), and {@code mac} the unpadded base64url HMAC-SHA256, under the store's proof key,
 * of {@code fp2, generation, resource, token, holder}. It is valid only for that (generation, resource,
 * token, holder): if a store that lost data grants one token number to two holders, the two proofs
 * differ, and a verifier that knows who was granted the token (the store's lease, the repository's own
 * record) refuses the other one. Anyone holding the store's key can verify a proof; an agent that only
 * read a token number cannot make one. Proofs are never printed in human output, logs, FENCED messages
 * or the ledger.
 *
 * <p>Proofs of the first format ({@code fp1.<generation>.<mac>}, which named no holder) are still
 * recognised as proofs, so that a push carrying one is answered with {@link Check#OLD_FORMAT} rather than
 * as malformed input; they are never valid.
 *
 * <p>The MAC is computed by the {@link Digests} a {@code Proofs} is made with ({@link #standard()}: the
 * JCE's). Thread-safe.
 */
public final class Proofs {
    private static final String PREFIX = "fp2.";
    private static final String OLD_PREFIX = "fp1.";
    private static final int MAC_LENGTH = 43;
    private static final int MAX_GENERATION = 64;
    /** The base64url of a {@link Names#MAX_LENGTH}-character name in UTF-8 (up to 3 bytes a character). */
    private static final int MAX_HOLDER = (Names.MAX_LENGTH * 3 * 4 + 2) / 3;

    /** What a FENCED message says of a proof of the first format. */
    public static final String OLD_FORMAT_DETAIL = "the proof is of fence's first format, which did not name its"
            + " holder; leases granted before the upgrade are void: acquire a new lease";

    private static final Proofs STANDARD = new Proofs(Digests.jce());

    private final Digests digests;

    /** Proofs whose MACs {@code digests} computes. */
    public Proofs(Digests digests) {
        this.digests = digests;
    }

    /** Proofs whose MACs the JCE computes. */
    public static Proofs standard() {
        return STANDARD;
    }

    /** Outcome of {@link #verify}. */
    public enum Check {
        VALID,
        /** Well-formed, made under another (older) generation of the store. */
        OLD_GENERATION,
        /** A proof of the first format, which named no holder: void since proofs name their holder. */
        OLD_FORMAT,
        /** Well-formed, but not a proof of this resource, token and holder. */
        BAD
    }

    /** Issues the proof of {@code token} on {@code resource}, granted to {@code holder}, under {@code identity}. */
    public String issue(StoreIdentity identity, String resource, long token, String holder) {
        return PREFIX + identity.generation() + "." + encodeHolder(holder) + "."
                + mac(identity, identity.generation(), resource, token, holder);
    }

    /** True when {@code proof} has the form of a proof of either format (says nothing about validity). */
    public static boolean isWellFormed(String proof) {
        return parse(proof) != null;
    }

    /**
     * The holder a well-formed proof names, or null for a malformed proof or one of the first format. Not
     * evidence of anything until {@link #verify} says {@link Check#VALID}.
     */
    public static String holderOf(String proof) {
        String[] parts = parse(proof);
        return parts == null || parts.length < 3 ? null : parts[1];
    }

    /**
     * The parts of a well-formed proof: {generation, holder, mac} for {@code fp2}, {generation, mac} for
     * {@code fp1}; null when malformed.
     */
    private static String[] parse(String proof) {
        if (proof == null) {
            return null;
        }
        if (proof.startsWith(OLD_PREFIX)) {
            int dot = proof.length() - MAC_LENGTH - 1;
            if (!isSegment(proof, OLD_PREFIX.length(), dot, MAX_GENERATION)
                    || !isSegment(proof, dot + 1, proof.length(), MAC_LENGTH)) {
                return null;
            }
            return new String[] {proof.substring(OLD_PREFIX.length(), dot), proof.substring(dot + 1)};
        }
        if (!proof.startsWith(PREFIX)) {
            return null;
        }
        int macDot = proof.length() - MAC_LENGTH - 1;
        int genDot = proof.indexOf('.', PREFIX.length());
        if (genDot < 0
                || macDot <= genDot
                || !isSegment(proof, PREFIX.length(), genDot, MAX_GENERATION)
                || !isSegment(proof, genDot + 1, macDot, MAX_HOLDER)
                || !isSegment(proof, macDot + 1, proof.length(), MAC_LENGTH)) {
            return null;
        }
        String holder = decodeHolder(proof.substring(genDot + 1, macDot));
        if (holder == null) {
            return null;
        }
        return new String[] {proof.substring(PREFIX.length(), genDot), holder, proof.substring(macDot + 1)};
    }

    /** True when {@code s[from, to)} is 1 to {@code max} base64url characters. */
    private static boolean isSegment(String s, int from, int to, int max) {
        if (from >= to || to - from > max || from < 0) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (!isBase64Url(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isBase64Url(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    }

    private static String encodeHolder(String holder) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(holder.getBytes(StandardCharsets.UTF_8));
    }

    /** The holder name a segment encodes, or null when it is not the canonical encoding of a valid name. */
    private static String decodeHolder(String segment) {
        try {
            String holder = new String(Base64.getUrlDecoder().decode(segment), StandardCharsets.UTF_8);
            // Exactly one spelling per holder: a segment that does not re-encode to itself is not a proof.
            if (!encodeHolder(holder).equals(segment)) {
                return null;
            }
            Names.require("holder", holder);
            return holder;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Checks {@code proof} for {@code (resource, token)} under {@code identity}, in constant time. A
     * {@link Check#VALID} answer proves that the store granted {@code token} to {@link #holderOf the
     * holder the proof names}; whether that holder is the one the token belongs to now is the caller's
     * question.
     *
     * @throws InvalidInputException when the proof is not well-formed
     */
    public Check verify(StoreIdentity identity, String resource, long token, String proof) {
        String[] parts = parse(proof);
        if (parts == null) {
            throw new InvalidInputException(
                    "fence-proof is not a well-formed proof (expected fp2.<generation>.<holder>.<mac>)");
        }
        if (parts.length == 2) {
            return Check.OLD_FORMAT;
        }
        String generation = parts[0];
        if (!generation.equals(identity.generation())) {
            return Check.OLD_GENERATION;
        }
        byte[] expected = mac(identity, generation, resource, token, parts[1]).getBytes(StandardCharsets.US_ASCII);
        byte[] given = parts[2].getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(expected, given) ? Check.VALID : Check.BAD;
    }

    private String mac(StoreIdentity identity, String generation, String resource, long token, String holder) {
        String message = "fp2\n" + generation + '\n' + resource + '\n' + token + '\n' + holder;
        byte[] out = digests.hmacSha256(identity.proofKey(), message.getBytes(StandardCharsets.UTF_8));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(out);
    }
}
