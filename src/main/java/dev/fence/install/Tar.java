package dev.fence.install;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Writes small POSIX ustar archives with the JDK alone. Enough for GitLab's per-repository hook tarball:
 * directories and regular files with short names, owner 0/0, a fixed modification time so the same
 * input gives the same bytes.
 */
final class Tar {
    /** Modification time of every entry: 2026-01-01T00:00:00Z, fixed for reproducible output. */
    static final long MTIME = 1_767_225_600L;

    private static final int BLOCK = 512;

    private Tar() {}

    /** One archive member: a directory when {@code content} is null. Directory names end in {@code /}. */
    record Entry(String name, int mode, byte[] content) {
        static Entry directory(String name) {
            return new Entry(name.endsWith("/") ? name : name + "/", 0755, null);
        }

        static Entry file(String name, int mode, String content) {
            return new Entry(name, mode, content.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The archive holding {@code entries} in order, ending with the two zero blocks ustar requires. */
    static byte[] archive(List<Entry> entries) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Entry e : entries) {
            byte[] content = e.content() == null ? new byte[0] : e.content();
            out.writeBytes(header(e, content.length));
            out.writeBytes(content);
            out.writeBytes(new byte[padding(content.length)]);
        }
        out.writeBytes(new byte[2 * BLOCK]);
        return out.toByteArray();
    }

    /** The name of the archive's first member, or null when {@code archive} does not start with a ustar header. */
    static String firstName(byte[] archive) {
        if (archive.length < BLOCK || !new String(archive, 257, 5, StandardCharsets.US_ASCII).equals("ustar")) {
            return null;
        }
        int end = 0;
        while (end < 100 && archive[end] != 0) {
            end++;
        }
        return new String(archive, 0, end, StandardCharsets.UTF_8);
    }

    private static byte[] header(Entry e, int size) {
        byte[] name = e.name().getBytes(StandardCharsets.UTF_8);
        if (name.length > 100) {
            throw new IllegalArgumentException("tar member name longer than 100 bytes: " + e.name());
        }
        byte[] h = new byte[BLOCK];
        System.arraycopy(name, 0, h, 0, name.length);
        octal(h, 100, 8, e.mode());
        octal(h, 108, 8, 0); // uid
        octal(h, 116, 8, 0); // gid
        octal(h, 124, 12, size);
        octal(h, 136, 12, MTIME);
        h[156] = (byte) (e.content() == null ? '5' : '0');
        ascii(h, 257, "ustar\0");
        ascii(h, 263, "00");
        ascii(h, 265, "root");
        ascii(h, 297, "root");
        // The checksum is computed with its own field read as eight spaces.
        ascii(h, 148, "        ");
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        ascii(h, 148, String.format("%06o", sum) + "\0 ");
        return h;
    }

    /** Writes {@code value} as zero-padded octal filling {@code length - 1} bytes, then a NUL. */
    private static void octal(byte[] h, int offset, int length, long value) {
        String digits = Long.toOctalString(value);
        String padded = "0".repeat(length - 1 - digits.length()) + digits;
        ascii(h, offset, padded + "\0");
    }

    private static void ascii(byte[] h, int offset, String text) {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(b, 0, h, offset, b.length);
    }

    private static int padding(int size) {
        return (BLOCK - size % BLOCK) % BLOCK;
    }
}
