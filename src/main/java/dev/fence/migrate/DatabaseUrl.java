package dev.fence.migrate;

import dev.fence.core.InvalidInputException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The database {@code fence migrate} works on, as given by {@code --db}: {@code
 * postgresql://user[:password]@host[:port]/database} ({@code postgres://} too), {@code sqlite:PATH}, or
 * {@code mariadb://user[:password]@host[:port]/database} ({@code mysql://} too, through the MariaDB
 * driver). User, password and database are percent-decoded.
 *
 * @param kind which engine, and so which dialect
 * @param jdbcUrl the driver's URL, without credentials
 * @param user the user to log in as, or null (SQLite)
 * @param password its password, or null; never in {@link #describe()} or {@link #toString()}
 * @param described the URL as given, with any password masked
 */
public record DatabaseUrl(Kind kind, String jdbcUrl, String user, String password, String described) {

    /** The engines {@code fence migrate} knows. */
    public enum Kind {
        /** DDL is transactional: the claim and the migration commit or roll back together. */
        POSTGRESQL,
        /** DDL is transactional: the claim and the migration commit or roll back together. */
        SQLITE,
        /** DDL commits by itself: the claim is a transaction of its own, made just before. */
        MARIADB;

        /** True when a migration's DDL rolls back with its transaction. */
        public boolean transactionalDdl() {
            return this != MARIADB;
        }
    }

    /**
     * Parses {@code url}; a relative SQLite path is taken from {@code cwd}.
     *
     * @throws InvalidInputException naming the problem, with any password masked
     */
    public static DatabaseUrl parse(String url, Path cwd) {
        if (url == null || url.isBlank()) {
            throw new InvalidInputException(
                    "--db is missing: postgresql://user@host:port/db, sqlite:PATH or" + " mariadb://user@host:port/db");
        }
        String lower = url.toLowerCase(Locale.ROOT);
        if (lower.startsWith("sqlite:")) {
            String path = url.substring("sqlite:".length());
            if (path.startsWith("//")) {
                path = path.substring(2);
            }
            if (path.isEmpty()) {
                throw new InvalidInputException("--db sqlite: names no file (expected sqlite:PATH)");
            }
            if (path.indexOf('?') >= 0) {
                // The driver reads what follows a '?' as settings of the connection, fence's own included
                // (the attach limit, the transaction mode).
                throw new InvalidInputException("--db sqlite: takes no connection parameters after '?' (the"
                        + " driver would apply them over fence's own settings), nor a file name with a '?'; got "
                        + mask(url));
            }
            Path file = cwd.resolve(path).toAbsolutePath().normalize();
            return new DatabaseUrl(Kind.SQLITE, "jdbc:sqlite:" + file, null, null, "sqlite:" + file);
        }
        Kind kind;
        String rest;
        String scheme;
        if (lower.startsWith("postgresql://") || lower.startsWith("postgres://")) {
            kind = Kind.POSTGRESQL;
            scheme = "jdbc:postgresql://";
            rest = url.substring(url.indexOf("://") + 3);
        } else if (lower.startsWith("mariadb://") || lower.startsWith("mysql://")) {
            kind = Kind.MARIADB;
            scheme = "jdbc:mariadb://";
            rest = url.substring(url.indexOf("://") + 3);
        } else {
            throw new InvalidInputException(
                    "--db must be postgresql://…, sqlite:PATH, mariadb://… or mysql://…; got " + mask(url));
        }
        int q = rest.indexOf('?');
        if (q >= 0) {
            // Refused, not dropped: a parameter the driver never got would leave the user thinking it held
            // (sslmode=require, a password=).
            throw new InvalidInputException("--db takes no connection parameters after '?': fence migrate would"
                    + " not pass them to the driver. Put a password before the @ (user:password@host,"
                    + " percent-encoded), or for PostgreSQL in ~/.pgpass; got " + mask(url));
        }
        int at = rest.lastIndexOf('@');
        int slash = rest.indexOf('/', at + 1);
        if (at <= 0 || slash < 0 || slash == rest.length() - 1) {
            throw new InvalidInputException(
                    "--db must name a user, a host and a database (scheme://user@host:port/database): " + mask(url));
        }
        String userInfo = rest.substring(0, at);
        int colon = userInfo.indexOf(':');
        String user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon), url);
        String password = colon < 0 ? null : decode(userInfo.substring(colon + 1), url);
        String hostPort = rest.substring(at + 1, slash);
        String database = decode(rest.substring(slash + 1), url);
        if (hostPort.isEmpty() || database.contains("/") || hostPort.contains(",")) {
            throw new InvalidInputException("--db must name one host and a database: " + mask(url));
        }
        String jdbc = scheme + hostPort + "/" + rest.substring(slash + 1);
        return new DatabaseUrl(kind, jdbc, user, password == null || password.isEmpty() ? null : password, mask(url));
    }

    /** The URL with any password masked: what messages and re-read commands show. */
    public String describe() {
        return described;
    }

    @Override
    public String toString() {
        return described;
    }

    private static String decode(String s, String url) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new InvalidInputException("--db has a malformed %-escape: " + mask(url));
        }
    }

    /**
     * {@code url} with the password between {@code user:} and the last {@code @} replaced by {@code ***}, and
     * any query string by {@code ?…} (it may hold a {@code password=}).
     */
    static String mask(String url) {
        int query = url.indexOf('?');
        if (query >= 0) {
            url = url.substring(0, query) + "?…";
        }
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (scheme < 0 || at < scheme) {
            return url;
        }
        int colon = url.indexOf(':', scheme + 3);
        if (colon < 0 || colon > at) {
            return url;
        }
        return url.substring(0, colon + 1) + "***" + url.substring(at);
    }
}
