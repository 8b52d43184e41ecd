package dev.fence.integrate;

import java.util.Locale;

/**
 * Whether a store or server URL carries a password: {@code fence integrate claude-code} writes the URL it
 * is given into project files, which a project commits and the agent itself can read.
 *
 * <p>Deliberately broader than any one store's parser: a URL that merely looks as if it holds a secret is
 * refused as well, since the cost of a false alarm is one clearer flag, and of a miss a leaked password.
 */
public final class UrlPasswords {
    private UrlPasswords() {}

    /**
     * Where {@code url} carries a password, for a message that never repeats it: {@code "its user part"}
     * for {@code scheme://user:password@…} (and, for Redis URLs, {@code redis://password@…}, which Redis
     * reads as a password alone), or {@code "its NAME parameter"} for a non-empty query parameter whose
     * name ends in {@code password} (any case); null when it carries none.
     */
    public static String where(String url) {
        if (url == null) {
            return null;
        }
        int q = url.indexOf('?');
        String query = q < 0 ? "" : url.substring(q + 1);
        String base = q < 0 ? url : url.substring(0, q);
        int hash = query.indexOf('#');
        if (hash >= 0) {
            query = query.substring(0, hash);
        }
        int sep = base.indexOf("://");
        if (sep > 0) {
            String scheme = base.substring(0, sep).toLowerCase(Locale.ROOT);
            String rest = base.substring(sep + 3);
            // As the PostgreSQL store reads it: a password may hold '/' or '@', and the last '@' ends it.
            int at = rest.lastIndexOf('@');
            if (at >= 0) {
                String userInfo = rest.substring(0, at);
                int colon = userInfo.indexOf(':');
                if (colon >= 0 && colon < userInfo.length() - 1) {
                    return "its user part";
                }
                if (colon < 0 && !userInfo.isEmpty() && scheme.startsWith("redis")) {
                    return "its user part";
                }
            }
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            if (name.toLowerCase(Locale.ROOT).endsWith("password") && !value.isEmpty()) {
                return "its " + name + " parameter";
            }
        }
        return null;
    }
}
