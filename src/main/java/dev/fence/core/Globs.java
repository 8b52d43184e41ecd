package dev.fence.core;

/**
 * Glob matching for ref and pusher patterns: {@code *} matches any run of characters other than
 * {@code /}, {@code **} matches any run including {@code /}, {@code ?} one character (code point) other
 * than {@code /}; everything else is literal.
 */
public final class Globs {
    private Globs() {}

    /** True when {@code text} matches {@code pattern} as a whole. */
    public static boolean matches(String pattern, String text) {
        return match(pattern, 0, text, 0);
    }

    private static boolean match(String p, int pi, String t, int ti) {
        while (pi < p.length()) {
            char c = p.charAt(pi);
            if (c == '*') {
                boolean deep = pi + 1 < p.length() && p.charAt(pi + 1) == '*';
                int next = pi + (deep ? 2 : 1);
                // Character by character: a run never ends inside a surrogate pair.
                for (int k = ti; k <= t.length(); k += k < t.length() ? Character.charCount(t.codePointAt(k)) : 1) {
                    if (match(p, next, t, k)) {
                        return true;
                    }
                    if (k < t.length() && !deep && t.charAt(k) == '/') {
                        return false;
                    }
                }
                return false;
            }
            if (ti >= t.length()) {
                return false;
            }
            if (c == '?') {
                // One character, as the shim counts it: a pair of surrogates is one.
                if (t.charAt(ti) == '/') {
                    return false;
                }
                pi++;
                ti += Character.charCount(t.codePointAt(ti));
                continue;
            }
            if (c != t.charAt(ti)) {
                return false;
            }
            pi++;
            ti++;
        }
        return ti == t.length();
    }
}
