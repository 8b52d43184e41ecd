package dev.fence.testing;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.UUID;

/**
 * The machine's MariaDB on 127.0.0.1:3306 (user {@code root}, no password, as the machines this project
 * runs on have it, and as {@code .ci/run} starts it when it is down). Each test makes a database of its
 * own with {@link #createDatabase()}.
 */
public final class MariaDbServer {
    /** The machine's server. */
    public static final int MACHINE_PORT = 3306;

    private static final String USER = "root";
    private static MariaDbServer shared;

    private MariaDbServer() {}

    /**
     * The machine's server.
     *
     * @throws IllegalStateException when it does not answer
     */
    public static synchronized MariaDbServer shared() {
        if (shared == null) {
            MariaDbServer s = new MariaDbServer();
            try (Connection c = s.connect("");
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT 1")) {
                rs.next();
            } catch (SQLException e) {
                throw new IllegalStateException(
                        "no MariaDB answers on 127.0.0.1:" + MACHINE_PORT + " as root without a"
                                + " password (.ci/run installs and starts one): " + e.getMessage(),
                        e);
            }
            shared = s;
        }
        return shared;
    }

    /** {@code mariadb://root@127.0.0.1:3306/<database>}, a {@code fence migrate --db} URL. */
    public String url(String database) {
        return "mariadb://" + USER + "@127.0.0.1:" + MACHINE_PORT + "/" + database;
    }

    /** A connection to {@code database} ("" for none), in autocommit mode; the caller closes it. */
    public Connection connect(String database) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", USER);
        p.setProperty("connectTimeout", "5000");
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + MACHINE_PORT + "/" + database, p);
    }

    /** Runs {@code sql} in {@code database}. */
    public void execute(String database, String sql) {
        try (Connection c = connect(database);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    /** Creates a database of its own for a test and returns its name. */
    public String createDatabase() {
        String name =
                "fence_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        execute("", "CREATE DATABASE " + name);
        return name;
    }

    /** Drops {@code database}. */
    public void dropDatabase(String database) {
        execute("", "DROP DATABASE IF EXISTS " + database);
    }
}
