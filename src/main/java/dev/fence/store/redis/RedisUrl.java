package dev.fence.store.redis;

import dev.fence.core.ConfigException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * A parsed {@code redis://[user:password@]host[:port][/db]} or {@code rediss://…} (TLS) store URL. A query
 * string is ignored here: {@link dev.fence.store.StoreOptions} are read from it elsewhere.
 *
 * @param tls true for {@code rediss}
 * @param host host name or address, without IPv6 brackets
 * @param port TCP port, 6379 when the URL has none
 * @param user ACL user name, or null
 * @param password password, or null; never part of {@link #toString()} or {@link #describe()}
 * @param database logical database number
 */
record RedisUrl(boolean tls, String host, int port, String user, String password, int database) {
    static final int DEFAULT_PORT = 6379;

    /**
     * Parses {@code url}.
     *
     * @throws ConfigException naming the problem, with any password masked
     */
    static RedisUrl parse(String url) {
        if (url == null) {
            throw new ConfigException("store URL is missing");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            // The exception's own message repeats the input, password included.
            throw new ConfigException("store URL is not a valid URL: " + mask(url));
        }
        String scheme = uri.getScheme();
        if (!"redis".equalsIgnoreCase(scheme) && !"rediss".equalsIgnoreCase(scheme)) {
            throw new ConfigException("store URL must start with redis:// or rediss://, got " + mask(url));
        }
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw new ConfigException("store URL names no host (expected redis://host:port): " + mask(url));
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
        String user = null;
        String password = null;
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            String rawUser = colon < 0 ? userInfo : userInfo.substring(0, colon);
            user = rawUser.isEmpty() ? null : decode(rawUser);
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
            if (password != null && password.isEmpty()) {
                password = null;
            }
            if (colon < 0) {
                // redis://secret@host: read as a password (as Lettuce does), which also keeps it masked.
                password = user;
                user = null;
            }
        }
        int database = 0;
        String path = uri.getPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            try {
                database = Integer.parseInt(path.substring(1));
            } catch (NumberFormatException e) {
                database = -1;
            }
            if (database < 0) {
                throw new ConfigException(
                        "store URL path must be a database number such as /0, got '" + path + "' in " + mask(url));
            }
        }
        return new RedisUrl("rediss".equalsIgnoreCase(scheme), host, port, user, password, database);
    }

    /** {@code host:port}, with brackets around an IPv6 address. */
    String address() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** The URL with the password replaced by {@code ***}. */
    String describe() {
        StringBuilder sb = new StringBuilder(tls ? "rediss://" : "redis://");
        if (user != null || password != null) {
            sb.append(user == null ? "" : user);
            if (password != null) {
                sb.append(":***");
            }
            sb.append('@');
        }
        sb.append(address());
        if (database != 0) {
            sb.append('/').append(database);
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return describe();
    }

    /** {@code url} with everything between {@code scheme://} and the last {@code @} masked, for messages about a bad URL. */
    static String mask(String url) {
        int at = url.lastIndexOf('@');
        if (at < 0) {
            return url;
        }
        int start = url.indexOf("//");
        String prefix = start >= 0 && start < at ? url.substring(0, start + 2) : "";
        return prefix + "***@" + url.substring(at + 1);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
