package dev.fence.server.client;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The versioned verdict of {@code fence serve}'s hook endpoints, by which a hook tells fence's answer from
 * anything else that may answer 200 at its URL (a proxy, a captive page, another service, a cached reply).
 *
 * <p>The hook sends a fresh random {@code nonce} with each request; the server's answer carries it back:
 *
 * <ul>
 *   <li>as text ({@code Accept: text/plain}), the first line is exactly {@code fence-verdict/1
 *       nonce=<nonce> exit=<0|1>} followed by the lines to print, or {@code fence-verdict/1
 *       nonce=<nonce> need} followed by {@code need <ancestor> <descendant>} lines;
 *   <li>as JSON, the object has {@code "format": "fence-verdict/1"} and {@code "nonce"} beside its usual
 *       fields.
 * </ul>
 *
 * A hook accepts a push only on status 200 with that first line (or those fields) for its own nonce and
 * exit 0; anything else refuses it ({@code reason=bad-server-reply}), whatever the server-down policy
 * says. Requests without a nonce get the unversioned answer of earlier versions.
 *
 * <p>A text answer's lines take at most {@link #MAX_TEXT_LINES_BYTES} bytes ({@link #appendLines}, {@link
 * #appendWithin}): the curl shim takes no answer over 256 KiB, which bash could not read within its budget.
 * Ancestry questions past that are asked in the next round.
 */
public final class VerdictFormat {
    /** The version tag. */
    public static final String FORMAT = "fence-verdict/1";

    /** What a nonce may be: 16 to 128 of {@code A-Z a-z 0-9 - _}. */
    public static final Pattern NONCE = Pattern.compile("[A-Za-z0-9_-]{16,128}");

    /** Most bytes of lines a text answer carries after its first line; the rest are counted, not shown. */
    public static final int MAX_TEXT_LINES_BYTES = 192 * 1024;

    private VerdictFormat() {}

    /**
     * Appends {@code lines}, each with its newline, while they fit in {@link #MAX_TEXT_LINES_BYTES}; when
     * some do not, one last line says how many were left out and where every decision is.
     */
    public static void appendLines(StringBuilder out, List<String> lines) {
        int shown = appendWithin(out, lines);
        if (shown < lines.size()) {
            out.append("fence: ")
                    .append(lines.size() - shown)
                    .append(" more lines of this answer are not shown; fence audit lists every decision\n");
        }
    }

    /**
     * Appends the first of {@code lines}, each with its newline, that fit in {@link #MAX_TEXT_LINES_BYTES}
     * together; returns how many.
     */
    public static int appendWithin(StringBuilder out, List<String> lines) {
        int bytes = 0;
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            bytes += l.getBytes(StandardCharsets.UTF_8).length + 1;
            if (bytes > MAX_TEXT_LINES_BYTES) {
                return i;
            }
            out.append(l).append('\n');
        }
        return lines.size();
    }

    /** The first line of a text verdict. */
    public static String verdictLine(String nonce, int exitCode) {
        return FORMAT + " nonce=" + nonce + " exit=" + exitCode;
    }

    /** The first line of a text answer that asks for ancestry. */
    public static String needLine(String nonce) {
        return FORMAT + " nonce=" + nonce + " need";
    }
}
