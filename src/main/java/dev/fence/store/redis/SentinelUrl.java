package dev.fence.store.redis;

import dev.fence.core.ConfigException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A parsed {@code redis-sentinel://[user:password@]host[:port][,host[:port]…]/master-name[/db]} store URL:
 * the sentinels to ask, the name they monitor the master under, and how to log in to the master.
 *
 * <p>The credentials before {@code @} are the master's (and its replicas'). The sentinels get the same
 * ones, unless the query string names their own: {@code sentinelPassword} (an empty value: the
 * sentinels need none) and {@code sentinelUser}. Other query options are {@link
 * dev.fence.store.StoreOptions}, read elsewhere. The sentinels are asked over plain TCP.
 *
 * @param sentinels the sentinels, in the URL's order, each with the credentials it is sent (database 0)
 * @param masterName the name the sentinels monitor the master under
 * @param user the master's ACL user name, or null
 * @param password the master's password, or null; never part of {@link #describe()}
 * @param database logical database number on the master
 */
record SentinelUrl(List<RedisUrl> sentinels, String masterName, String user, String password, int database) {
    static final String SCHEME = "redis-sentinel";
    static final int DEFAULT_PORT = 26379;

    SentinelUrl {
        sentinels = List.copyOf(sentinels);
    }

    /** Whether {@code url} is of this form (by its scheme). */
    static boolean matches(String url) {
        return url != null && url.regionMatches(true, 0, SCHEME + "://", 0, SCHEME.length() + 3);
    }

    /**
     * Parses {@code url}, query string included ({@code sentinelUser}, {@code sentinelPassword}; other
     * options are left to the caller).
     *
     * @throws ConfigException naming the problem, with any password masked
     */
    static SentinelUrl parse(String url) {
        if (!matches(url)) {
            throw new ConfigException("store URL must start with " + SCHEME + "://, got "
                    + (url == null ? "nothing" : RedisUrl.mask(url)));
        }
        // Parsed by hand: java.net.URI takes one host at most, and no bracketed IPv6 address in a list.
        for (int i = 0; i < url.length(); i++) {
            char c = url.charAt(i);
            if (Character.isWhitespace(c) || Character.isISOControl(c)) {
                throw new ConfigException("store URL is not a valid URL (a space or control character at position " + i
                        + "): " + masked(url));
            }
        }
        String rest = url.substring(SCHEME.length() + 3);
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "" : rest.substring(slash + 1);

        String user = null;
        String password = null;
        String hosts = authority;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            hosts = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            String rawUser = colon < 0 ? userInfo : userInfo.substring(0, colon);
            user = rawUser.isEmpty() ? null : decode(rawUser);
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
            if (password != null && password.isEmpty()) {
                password = null;
            }
            if (colon < 0) {
                // As for redis://secret@host: a lone word is a password, which also keeps it masked.
                password = user;
                user = null;
            }
        }

        String sentinelUser = user;
        String sentinelPassword = password;
        if (query != null) {
            boolean ownUser = false;
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                String key = decode(eq < 0 ? pair : pair.substring(0, eq));
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                if (key.equals("sentinelPassword")) {
                    sentinelPassword = value.isEmpty() ? null : value;
                    if (!ownUser) {
                        // The sentinels' own password goes with their own user, or the default one.
                        sentinelUser = null;
                    }
                } else if (key.equals("sentinelUser")) {
                    sentinelUser = value.isEmpty() ? null : value;
                    ownUser = true;
                }
            }
        }

        List<RedisUrl> sentinels = new ArrayList<>();
        for (String hostPort : hosts.split(",", -1)) {
            sentinels.add(sentinel(hostPort, sentinelUser, sentinelPassword, url));
        }

        String[] segments = path.split("/", -1);
        String masterName = segments.length == 0 ? "" : decode(segments[0]);
        if (masterName.isEmpty()) {
            throw new ConfigException("store URL names no master (expected " + SCHEME
                    + "://host:26379[,host:26379…]/master-name[/db]): " + masked(url));
        }
        int database = 0;
        if (segments.length > 1 && !segments[1].isEmpty()) {
            try {
                database = Integer.parseInt(segments[1]);
            } catch (NumberFormatException e) {
                database = -1;
            }
        }
        boolean trailing = segments.length > 2 && !(segments.length == 3 && segments[2].isEmpty());
        if (database < 0 || trailing) {
            throw new ConfigException(
                    "store URL path must be /master-name or /master-name/<database number>, in " + masked(url));
        }
        return new SentinelUrl(sentinels, masterName, user, password, database);
    }

    /** How to log in to the master at {@code host:port}, as the sentinels named it. */
    RedisUrl master(String host, int port) {
        return new RedisUrl(false, host, port, user, password, database);
    }

    /** The sentinels' addresses, comma-separated. */
    String addresses() {
        List<String> out = new ArrayList<>();
        for (RedisUrl s : sentinels) {
            out.add(s.address());
        }
        return String.join(",", out);
    }

    /** The URL with passwords replaced by {@code ***}. */
    String describe() {
        StringBuilder sb = new StringBuilder(SCHEME).append("://");
        if (user != null || password != null) {
            sb.append(user == null ? "" : user);
            if (password != null) {
                sb.append(":***");
            }
            sb.append('@');
        }
        sb.append(addresses()).append('/').append(masterName);
        if (database != 0) {
            sb.append('/').append(database);
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return describe();
    }

    private static RedisUrl sentinel(String hostPort, String user, String password, String url) {
        String host = hostPort;
        int port = DEFAULT_PORT;
        String portText = null;
        if (hostPort.startsWith("[")) {
            int close = hostPort.indexOf(']');
            if (close < 0) {
                throw badHost(url);
            }
            host = hostPort.substring(1, close);
            String after = hostPort.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw badHost(url);
                }
                portText = after.substring(1);
            }
        } else {
            int colon = hostPort.lastIndexOf(':');
            if (colon >= 0) {
                host = hostPort.substring(0, colon);
                portText = hostPort.substring(colon + 1);
            }
        }
        if (portText != null) {
            try {
                port = Integer.parseInt(portText);
            } catch (NumberFormatException e) {
                port = -1;
            }
        }
        if (host.isEmpty() || host.indexOf(':') >= 0 && !hostPort.startsWith("[") || port <= 0 || port > 65535) {
            throw badHost(url);
        }
        return new RedisUrl(false, host, port, user, password, 0);
    }

    private static ConfigException badHost(String url) {
        return new ConfigException("store URL must list sentinels as host:port[,host:port…], e.g. " + SCHEME
                + "://10.0.0.1:26379,10.0.0.2:26379/mymaster; got " + masked(url));
    }

    /** {@code url} masked as {@link RedisUrl#mask} does, and without its query (it may hold a password). */
    private static String masked(String url) {
        int q = url.indexOf('?');
        return RedisUrl.mask(q < 0 ? url : url.substring(0, q) + "?…");
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            // The message would repeat the text, which may be a password.
            throw new ConfigException("store URL has a malformed %-escape");
        }
    }
}
