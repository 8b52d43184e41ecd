package dev.fence.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Proofs that a token was granted. A token number alone is no credential: FENCED messages and the
 * ledger show token numbers, so a push must also carry the grant's proof.
 *
 * <p>A proof is {@code fp1.<generation>.<mac>} where {@code mac} is the unpadded base64url HMAC-SHA256,
 * under the store's proof key, of {@code generation, resource, token}. Anyone holding the store's key
 * (the store, a hook or server with store credentials) can verify it; an agent that only read a token
 * number cannot make one. Proofs are never printed in human output, logs, FENCED messages or the
 * ledger.
 *
 * <p>Thread-safe.
 */
public final class Proofs {
    private static final String PREFIX = "fp1.";
    private static final int HMAC_BLOCK = 64;
    private static final int MAC_LENGTH = 43;
    private static final int MAX_GENERATION = 64;

    private Proofs() {}

    /** Outcome of {@link #verify}. */
    public enum Check {
        VALID,
        /** Well-formed, made under another (older) generation of the store. */
        OLD_GENERATION,
        /** Well-formed, but not a proof of this resource and token. */
        BAD
    }

    /** Issues the proof of {@code token} on {@code resource} under {@code identity}. */
    public static String issue(StoreIdentity identity, String resource, long token) {
        return PREFIX + identity.generation() + "." + mac(identity, identity.generation(), resource, token);
    }

    /** True when {@code proof} has the form of a proof (says nothing about validity). */
    public static boolean isWellFormed(String proof) {
        return generationEnd(proof) > 0;
    }

    /**
     * Where the generation of a well-formed proof ({@code fp1.<generation>.<mac>}: a generation of 1 to 64
     * and a MAC of exactly 43 base64url characters) ends, or -1. Checked by hand rather than by a regular
     * expression: each hook checks one proof, and compiling a pattern costs a fresh JVM more than that.
     */
    private static int generationEnd(String proof) {
        if (proof == null || !proof.startsWith(PREFIX)) {
            return -1;
        }
        int dot = proof.length() - MAC_LENGTH - 1;
        int generation = dot - PREFIX.length();
        if (generation < 1 || generation > MAX_GENERATION || proof.charAt(dot) != '.') {
            return -1;
        }
        for (int i = PREFIX.length(); i < proof.length(); i++) {
            if (i != dot && !isBase64Url(proof.charAt(i))) {
                return -1;
            }
        }
        return dot;
    }

    private static boolean isBase64Url(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    }

    /**
     * Checks {@code proof} for {@code (resource, token)} under {@code identity}, in constant time.
     *
     * @throws InvalidInputException when the proof is not well-formed
     */
    public static Check verify(StoreIdentity identity, String resource, long token, String proof) {
        int dot = generationEnd(proof);
        if (dot < 0) {
            throw new InvalidInputException("fence-proof is not a well-formed proof (expected fp1.<generation>.<mac>)");
        }
        String generation = proof.substring(PREFIX.length(), dot);
        if (!generation.equals(identity.generation())) {
            return Check.OLD_GENERATION;
        }
        byte[] expected = mac(identity, generation, resource, token).getBytes(StandardCharsets.US_ASCII);
        byte[] given = proof.substring(dot + 1).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(expected, given) ? Check.VALID : Check.BAD;
    }

    private static String mac(StoreIdentity identity, String generation, String resource, long token) {
        String message = generation + '\n' + resource + '\n' + token;
        byte[] out = mac(identity.proofKey(), message.getBytes(StandardCharsets.UTF_8));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(out);
    }

    /** MACs computed in plain Java before switching to the JCE (see {@link #mac(byte[], byte[])}). */
    private static final int PLAIN_JAVA_MACS = 64;

    private static final AtomicInteger MACS = new AtomicInteger();

    /**
     * HMAC-SHA256 of {@code message}: in plain Java ({@link #hmacSha256}) for the first few of a process,
     * which is all a hook computes, then with the JCE, whose SHA-256 the JIT backs with CPU instructions
     * (a few times faster per MAC, worth its start-up cost to a long-running client or server). The same
     * bytes either way.
     */
    static byte[] mac(byte[] key, byte[] message) {
        if (MACS.get() < PLAIN_JAVA_MACS && MACS.incrementAndGet() <= PLAIN_JAVA_MACS) {
            return hmacSha256(key, message);
        }
        try {
            Mac mac = JceMacs.MACS.get();
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(message);
        } catch (GeneralSecurityException | RuntimeException e) {
            return hmacSha256(key, message);
        }
    }

    /**
     * One JCE {@code Mac} per thread, looked up once: {@code Mac.getInstance} walks the providers on every
     * call, which under many callers (a server, a busy client) costs more than the MAC. A holder class,
     * so that a hook, which never gets this far, does not load it.
     */
    private static final class JceMacs {
        static final ThreadLocal<Mac> MACS = new ThreadLocal<>() {
            @Override
            protected Mac initialValue() {
                try {
                    return Mac.getInstance("HmacSHA256");
                } catch (GeneralSecurityException e) {
                    throw new IllegalStateException("no HmacSHA256 in this JDK", e);
                }
            }
        };

        private JceMacs() {}
    }

    /**
     * HMAC-SHA256 (RFC 2104) over {@link Sha256}. The same bytes as {@code
     * javax.crypto.Mac.getInstance("HmacSHA256")}, without the JCA: looking up a {@code Mac} (or a {@code
     * MessageDigest}) walks the security providers and reads the crypto policy files, which a hook
     * process would pay on every push for one HMAC.
     */
    static byte[] hmacSha256(byte[] key, byte[] message) {
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
