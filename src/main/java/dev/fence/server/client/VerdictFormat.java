package dev.fence.server.client;

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
 */
public final class VerdictFormat {
    /** The version tag. */
    public static final String FORMAT = "fence-verdict/1";

    /** What a nonce may be: 16 to 128 of {@code A-Z a-z 0-9 - _}. */
    public static final Pattern NONCE = Pattern.compile("[A-Za-z0-9_-]{16,128}");

    private VerdictFormat() {}

    /** The first line of a text verdict. */
    public static String verdictLine(String nonce, int exitCode) {
        return FORMAT + " nonce=" + nonce + " exit=" + exitCode;
    }

    /** The first line of a text answer that asks for ancestry. */
    public static String needLine(String nonce) {
        return FORMAT + " nonce=" + nonce + " need";
    }
}
