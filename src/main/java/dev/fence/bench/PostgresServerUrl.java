package dev.fence.bench;

import dev.fence.core.InvalidInputException;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * The PostgreSQL server that {@code fence bench --scale --postgres URL} may use: the bench creates databases
 * of its own there ({@code fence_scale_*}) and drops them when it is done, never touching another one.
 *
 * @param user role to log in as (one that may create databases)
 * @param password its password, or null
 * @param host server host
 * @param port server port
 * @param database the database to connect to for creating and dropping ({@code postgres} by default)
 */
record PostgresServerUrl(String user, String password, String host, int port, String database) {

    /**
     * Parses {@code postgresql://user[:password]@host[:port][/database]}.
     *
     * @throws InvalidInputException naming the problem (never the password)
     */
    static PostgresServerUrl parse(String url) {
        String bad = "--postgres must be postgresql://USER[:PASSWORD]@HOST[:PORT][/DATABASE]";
        URI u;
        try {
            u = new URI(url);
        } catch (URISyntaxException e) {
            throw new InvalidInputException(bad);
        }
        if (!"postgresql".equals(u.getScheme()) && !"postgres".equals(u.getScheme())
                || u.getHost() == null
                || u.getRawUserInfo() == null) {
            throw new InvalidInputException(bad);
        }
        String info = u.getRawUserInfo();
        int colon = info.indexOf(':');
        String user = decode(colon < 0 ? info : info.substring(0, colon));
        String password = colon < 0 ? null : decode(info.substring(colon + 1));
        String path = u.getPath() == null ? "" : u.getPath().replaceFirst("^/", "");
        return new PostgresServerUrl(
                user, password, u.getHost(), u.getPort() < 0 ? 5432 : u.getPort(), path.isEmpty() ? "postgres" : path);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** The JDBC URL of {@code db} on this server. */
    String jdbc(String db) {
        return "jdbc:postgresql://" + host + ":" + port + "/" + db;
    }

    /** The fence store URL of {@code db} on this server. */
    String storeUrl(String db) {
        String auth =
                user + (password == null ? "" : ":" + java.net.URLEncoder.encode(password, StandardCharsets.UTF_8));
        return "postgresql://" + auth + "@" + host + ":" + port + "/" + db;
    }

    /** {@code host:port}, for messages. */
    String describe() {
        return user + "@" + host + ":" + port;
    }

    /** Creates database {@code db}. */
    void create(String db) throws IOException {
        admin("CREATE DATABASE " + db);
    }

    /** Drops database {@code db}, ending sessions still in it; never throws. */
    void drop(String db) {
        try {
            admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        } catch (IOException e) {
            // best effort: the message said which database it was
        }
    }

    private void admin(String sql) throws IOException {
        Properties p = new Properties();
        p.setProperty("user", user);
        if (password != null) {
            p.setProperty("password", password);
        }
        p.setProperty("connectTimeout", "5");
        try (Connection c = DriverManager.getConnection(jdbc(database), p);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IOException("PostgreSQL " + describe() + ": " + sql + ": " + e.getMessage(), e);
        }
    }
}
