package dev.fence.store.postgres;

import dev.fence.core.ConfigException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A parsed {@code postgresql://user[:password]@host[:port][,host[:port]…]/database} store URL ({@code
 * postgres://} is the same). User, password and database are percent-decoded; a query string is ignored
 * here ({@link dev.fence.store.StoreOptions} are read from it elsewhere). Several hosts name the members of
 * one replicated cluster: fence connects to whichever of them is the primary.
 *
 * @param user role to log in as
 * @param password its password, or null (the driver then looks in {@code ~/.pgpass}); never part of
 *     {@link #toString()} or {@link #describe()}
 * @param hosts one or more {@code host:port}, in the order they are tried
 * @param database database name
 */
record PostgresUrl(String user, String password, List<Host> hosts, String database) {
    static final int DEFAULT_PORT = 5432;

    /**
     * One server of the URL.
     *
     * @param host name or address, without IPv6 brackets
     * @param port TCP port
     */
    record Host(String host, int port) {
        /** {@code host:port}, with brackets around an IPv6 address. */
        String address() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    PostgresUrl {
        hosts = List.copyOf(hosts);
    }

    /**
     * Parses {@code url}.
     *
     * @throws ConfigException naming the problem, with any password masked
     */
    static PostgresUrl parse(String url) {
        if (url == null) {
            throw new ConfigException("store URL is missing");
        }
        String lower = url.toLowerCase(Locale.ROOT);
        String rest;
        if (lower.startsWith("postgresql://")) {
            rest = url.substring("postgresql://".length());
        } else if (lower.startsWith("postgres://")) {
            rest = url.substring("postgres://".length());
        } else {
            throw new ConfigException("store URL must start with postgresql:// or postgres://, got " + mask(url));
        }
        int q = rest.indexOf('?');
        if (q >= 0) {
            rest = rest.substring(0, q);
        }
        // A password may hold any character once percent-encoded; the last '@' ends the user part.
        int at = rest.lastIndexOf('@');
        int slash = rest.indexOf('/', at + 1);
        if (at < 0) {
            throw new ConfigException(
                    "store URL names no user (expected postgresql://user@host:port/database): " + mask(url));
        }
        if (slash < 0) {
            throw new ConfigException(
                    "store URL names no database (expected postgresql://user@host:port/database): " + mask(url));
        }
        String userInfo = rest.substring(0, at);
        int colon = userInfo.indexOf(':');
        String user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon), url);
        String password = colon < 0 ? null : decode(userInfo.substring(colon + 1), url);
        if (user.isEmpty()) {
            throw new ConfigException(
                    "store URL names no user (expected postgresql://user@host:port/database): " + mask(url));
        }
        if (password != null && password.isEmpty()) {
            password = null;
        }
        List<Host> hosts = new ArrayList<>();
        for (String spec : rest.substring(at + 1, slash).split(",", -1)) {
            hosts.add(host(spec, url));
        }
        String database = decode(rest.substring(slash + 1), url);
        if (database.isEmpty() || database.indexOf('/') >= 0) {
            throw new ConfigException("store URL must end in /<database>, got " + mask(url));
        }
        return new PostgresUrl(user, password, hosts, database);
    }

    private static Host host(String spec, String url) {
        String host;
        String port = null;
        if (spec.startsWith("[")) {
            int close = spec.indexOf(']');
            if (close < 0) {
                throw new ConfigException("store URL has an unclosed '[' in its host: " + mask(url));
            }
            host = spec.substring(1, close);
            String after = spec.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw new ConfigException("store URL has a malformed host '" + spec + "': " + mask(url));
                }
                port = after.substring(1);
            }
        } else {
            int colon = spec.lastIndexOf(':');
            host = colon < 0 ? spec : spec.substring(0, colon);
            port = colon < 0 ? null : spec.substring(colon + 1);
        }
        if (host.isEmpty()) {
            throw new ConfigException(
                    "store URL names an empty host (expected postgresql://user@host:port/database): " + mask(url));
        }
        int number = DEFAULT_PORT;
        if (port != null) {
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                number = -1;
            }
            if (number < 1 || number > 65535) {
                throw new ConfigException("store URL has a bad port '" + port + "' (1 to 65535): " + mask(url));
            }
        }
        return new Host(host, number);
    }

    /** The driver's URL: hosts and database, with the credentials left to connection properties. */
    String jdbcUrl() {
        StringBuilder sb = new StringBuilder("jdbc:postgresql://");
        for (int i = 0; i < hosts.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(hosts.get(i).address());
        }
        // The driver URL-decodes the database name, '+' included.
        return sb.append('/')
                .append(URLEncoder.encode(database, StandardCharsets.UTF_8).replace("+", "%20"))
                .toString();
    }

    /** The URL with the password replaced by {@code ***}. */
    String describe() {
        StringBuilder sb = new StringBuilder("postgresql://").append(encode(user));
        if (password != null) {
            sb.append(":***");
        }
        sb.append('@');
        for (int i = 0; i < hosts.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(hosts.get(i).address());
        }
        return sb.append('/').append(encode(database)).toString();
    }

    @Override
    public String toString() {
        return describe();
    }

    /** {@code url} with everything between {@code scheme://} and the last {@code @} masked, for messages about a bad URL. */
    static String mask(String url) {
        int q = url.indexOf('?');
        String base = q < 0 ? url : url.substring(0, q);
        int at = base.lastIndexOf('@');
        if (at < 0) {
            return url;
        }
        int start = url.indexOf("//");
        String prefix = start >= 0 && start < at ? url.substring(0, start + 2) : "";
        return prefix + "***@" + url.substring(at + 1);
    }

    private static String decode(String s, String url) {
        try {
            // URLDecoder would read '+' as a space, which a URL's user or path does not mean.
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("store URL has a malformed %-escape: " + mask(url));
        }
    }

    private static String encode(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '-'
                    || c == '_'
                    || c == '.'
                    || c == '~') {
                sb.append((char) c);
            } else {
                sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
                sb.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return sb.toString();
    }
}
