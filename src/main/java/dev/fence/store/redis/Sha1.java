package dev.fence.store.redis;

import java.nio.charset.StandardCharsets;

/**
 * SHA-1 (FIPS 180-4) in plain Java, only to name scripts as Redis does ({@code EVALSHA}): looking up
 * the JDK's {@code MessageDigest} starts the security-provider framework, which a one-shot hook process
 * would pay on every push. Not a security function here. Checked against {@code MessageDigest} by the
 * tests.
 */
final class Sha1 {
    private Sha1() {}

    /** The lower-case hex SHA-1 of {@code text}'s UTF-8 bytes. */
    static String hex(String text) {
        byte[] data = text.getBytes(StandardCharsets.UTF_8);
        int[] h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
        long bits = (long) data.length * 8;
        int padded = ((data.length + 8) / 64 + 1) * 64;
        byte[] m = new byte[padded];
        System.arraycopy(data, 0, m, 0, data.length);
        m[data.length] = (byte) 0x80;
        for (int i = 0; i < 8; i++) {
            m[padded - 1 - i] = (byte) (bits >>> (8 * i));
        }
        int[] w = new int[80];
        for (int block = 0; block < padded; block += 64) {
            for (int i = 0; i < 16; i++) {
                int j = block + 4 * i;
                w[i] = ((m[j] & 0xff) << 24) | ((m[j + 1] & 0xff) << 16) | ((m[j + 2] & 0xff) << 8) | (m[j + 3] & 0xff);
            }
            for (int i = 16; i < 80; i++) {
                w[i] = Integer.rotateLeft(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
            }
            int a = h[0];
            int b = h[1];
            int c = h[2];
            int d = h[3];
            int e = h[4];
            for (int i = 0; i < 80; i++) {
                int f;
                int k;
                if (i < 20) {
                    f = (b & c) | (~b & d);
                    k = 0x5A827999;
                } else if (i < 40) {
                    f = b ^ c ^ d;
                    k = 0x6ED9EBA1;
                } else if (i < 60) {
                    f = (b & c) | (b & d) | (c & d);
                    k = 0x8F1BBCDC;
                } else {
                    f = b ^ c ^ d;
                    k = 0xCA62C1D6;
                }
                int t = Integer.rotateLeft(a, 5) + f + e + k + w[i];
                e = d;
                d = c;
                c = Integer.rotateLeft(b, 30);
                b = a;
                a = t;
            }
            h[0] += a;
            h[1] += b;
            h[2] += c;
            h[3] += d;
            h[4] += e;
        }
        StringBuilder out = new StringBuilder(40);
        for (int v : h) {
            String s = Integer.toHexString(v);
            out.append("0".repeat(8 - s.length())).append(s);
        }
        return out.toString();
    }
}
