package dev.fence.migrate;

import dev.fence.core.ConfigException;
import dev.fence.core.FenceException;
import dev.fence.core.InternalException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.StoreUnavailableException;
import dev.fence.store.JarResources;
import dev.fence.store.SqlScripts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * A connection to the database being migrated, with the dialect's statements ({@code
 * dev/fence/migrate/<kind>.sql}). Not thread-safe: one per run.
 *
 * <p>fence's tables live where the connection finds them when it opens: on PostgreSQL the schema of the
 * {@code fence_tokens} its search_path resolves, else (the first run) {@code current_schema()}; on MariaDB
 * {@code DATABASE()}. That place is read once, before any migration runs, and every statement of
 * fence's names its tables in it ({@code ${schema}} in the SQL resources stands for it, quoted), so that a
 * migration that moves the session elsewhere ({@code SET search_path}, {@code USE}) leaves fence's claim and
 * record where they were. SQLite has no such place: a migration cannot send its unqualified names elsewhere
 * without naming fence's tables (a {@code TEMP} table of theirs), which is refused before it runs; nor
 * reach another database file: the connection attaches none ({@code SQLITE_LIMIT_ATTACHED} is 0).
 */
final class Database implements AutoCloseable {
    /** How long connecting may take, in seconds. */
    static final int CONNECT_TIMEOUT_SECONDS = 5;

    /** How long SQLite waits for another writer's lock, in milliseconds. */
    static final int SQLITE_BUSY_MILLIS = 30_000;

    /** What fence's SQL resources write for the quoted name of the schema (database) its tables live in. */
    static final String SCHEMA = "${schema}";

    private final DatabaseUrl url;
    private final Connection connection;
    private final Map<String, String> sql;
    /** The quoted schema (MariaDB: database) fence's tables live in; null on SQLite. */
    private final String schema;

    private Database(DatabaseUrl url, Connection connection, Map<String, String> sql, String schema) {
        this.url = url;
        this.connection = connection;
        this.sql = sql;
        this.schema = schema;
    }

    /**
     * Connects to {@code url} and reads where fence's tables live (see above).
     *
     * @throws StoreUnavailableException when the database cannot be reached (exit 5)
     * @throws InvalidInputException when PostgreSQL's search_path names no schema that exists (then
     *     {@code current_schema()} is null and fence has nowhere to keep its tables); nothing was written
     */
    static Database open(DatabaseUrl url) {
        Map<String, String> statements = statements(url.kind());
        Properties p = new Properties();
        if (url.user() != null) {
            p.setProperty("user", url.user());
        }
        if (url.password() != null) {
            p.setProperty("password", url.password());
        }
        switch (url.kind()) {
            case POSTGRESQL -> {
                p.setProperty("connectTimeout", Integer.toString(CONNECT_TIMEOUT_SECONDS));
                p.setProperty("ApplicationName", "fence-migrate");
            }
            case MARIADB -> p.setProperty("connectTimeout", Integer.toString(CONNECT_TIMEOUT_SECONDS * 1000));
            case SQLITE -> {
                // The claim and the migration's DDL are one write transaction from its first statement on.
                p.setProperty("transaction_mode", "IMMEDIATE");
                p.setProperty("busy_timeout", Integer.toString(SQLITE_BUSY_MILLIS));
                // No ATTACH on this connection, whatever a statement says: the engine's own limit, so it holds
                // for every way SQLite reads an ATTACH. An attached file is another database, fenced by
                // another resource or none, or the lease store with its proof key.
                p.setProperty("limit_attached", "0");
            }
        }
        Connection c;
        try {
            c = DriverManager.getConnection(url.jdbcUrl(), p);
        } catch (SQLException e) {
            throw failure(url, e);
        }
        try {
            c.setAutoCommit(true);
            String schema = schemaOf(url, c, statements);
            return new Database(url, c, schema == null ? statements : bind(statements, schema), schema);
        } catch (SQLException e) {
            closeQuietly(c);
            throw failure(url, e);
        } catch (RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    /**
     * The quoted schema (database) fence's tables live in, as the dialect's statement {@code schema} reads
     * it on a connection no migration has used yet; null for a dialect without one (SQLite).
     */
    private static String schemaOf(DatabaseUrl url, Connection c, Map<String, String> statements) throws SQLException {
        String query = statements.get("schema");
        if (query == null) {
            return null;
        }
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(query)) {
            String name = rs.next() ? rs.getString(1) : null;
            if (name != null) {
                return quote(url.kind(), name);
            }
            if (url.kind() == DatabaseUrl.Kind.POSTGRESQL) {
                throw new InvalidInputException("the database " + url.describe() + " has no current schema: its"
                        + " search_path (" + rs.getString(2) + ") names no schema that exists, so fence cannot"
                        + " tell where its tables (fence_tokens, schema_migrations) belong, and it does not guess."
                        + " Give the role or the database a search_path whose first existing schema is the one"
                        + " fence should use (ALTER ROLE … SET search_path = public), or create the schema it"
                        + " names");
            }
            throw new InvalidInputException("the connection to " + url.describe() + " has no current database,"
                    + " so fence cannot tell where its tables (fence_tokens, schema_migrations) belong: name the"
                    + " database in --db");
        }
    }

    /**
     * {@code name} as a quoted identifier of {@code kind}, the quote character doubled inside: PostgreSQL's
     * (and SQLite's) {@code "…"}, MariaDB's {@code `…`} (whatever the {@code sql_mode}).
     */
    static String quote(DatabaseUrl.Kind kind, String name) {
        return kind == DatabaseUrl.Kind.MARIADB
                ? "`" + name.replace("`", "``") + "`"
                : "\"" + name.replace("\"", "\"\"") + "\"";
    }

    /** {@code statements} with {@link #SCHEMA} replaced by {@code schema}, once, literally. */
    private static Map<String, String> bind(Map<String, String> statements, String schema) {
        Map<String, String> out = new HashMap<>();
        statements.forEach((name, text) -> out.put(name, text.replace(SCHEMA, schema)));
        return Map.copyOf(out);
    }

    /**
     * The failure to report for {@code e}, raised by fence's own statements (connecting, finding its tables,
     * its bookkeeping): {@link StoreUnavailableException} (exit 5, try again later) when the database could
     * not be reached or was busy, else {@link ConfigException} (exit 6) saying that it refused fence's
     * statement, which trying again will not change: the credentials, a privilege, a trigger, a table of
     * fence's names in another shape.
     */
    static FenceException failure(DatabaseUrl url, SQLException e) {
        if (isTransient(url.kind(), e)) {
            return new StoreUnavailableException(
                    "the database " + url.describe() + " cannot be reached: " + e.getMessage(), e);
        }
        String state = e.getSQLState() == null ? "" : " (SQLSTATE " + e.getSQLState() + ")";
        return new ConfigException(
                "the database " + url.describe() + " refused fence's own statement" + state + ": " + e.getMessage()
                        + ". Trying again will not help: check the --db URL's credentials, the account's privileges,"
                        + " and any trigger on or table of fence's names there (fence_tokens, schema_migrations)",
                e);
    }

    /**
     * True for an error that another attempt may not meet: the connection, a lock, a deadlock, the server's
     * resources or its shutdown. SQLite's driver gives no SQLSTATE, so its result code decides.
     */
    private static boolean isTransient(DatabaseUrl.Kind kind, SQLException e) {
        if (kind == DatabaseUrl.Kind.SQLITE) {
            int primary = e.getErrorCode() & 0xff;
            // BUSY, LOCKED, IOERR, FULL, CANTOPEN, PROTOCOL; and no code at all, as before.
            return e.getErrorCode() == 0 || Set.of(5, 6, 10, 13, 14, 15).contains(primary);
        }
        String state = e.getSQLState();
        if (state == null || state.length() < 2) {
            return true;
        }
        // 08 connection, 40 rollback (deadlock, serialization), 53 resources, 55 lock not available (and
        // object in use), 57 operator intervention (shutdown, cancel), 58 system error; HY is MariaDB's
        // catch-all, which its lock-wait timeout uses.
        return Set.of("08", "40", "53", "55", "57", "58", "HY").contains(state.substring(0, 2));
    }

    /** True for an error that says the connection, not the SQL, failed. */
    static boolean isConnectionFailure(SQLException e) {
        String state = e.getSQLState();
        return state != null && state.startsWith("08");
    }

    DatabaseUrl url() {
        return url;
    }

    Connection connection() {
        return connection;
    }

    /** The dialect's statement {@code name}, its tables named where fence's tables live. */
    String sql(String name) {
        String s = sql.get(name);
        if (s == null) {
            throw new InternalException("no statement '" + name + "' for " + url.kind());
        }
        if (schema == null && s.contains(SCHEMA)) {
            throw new InternalException("statement '" + name + "' names a schema " + url.kind() + " has none of");
        }
        return s;
    }

    /** fence's table {@code table} as its statements name it: in fence's schema where there is one. */
    String table(String table) {
        return schema == null ? table : schema + "." + quote(url.kind(), table);
    }

    /** True when the dialect has a statement {@code name} (some exist on one engine only). */
    boolean has(String name) {
        return sql.containsKey(name);
    }

    /** Runs the dialect's statement {@code name} with {@code args}; returns the update count. */
    int update(String name, Object... args) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql(name))) {
            bind(ps, args);
            return ps.executeUpdate();
        }
    }

    /** The first column of the first row of the dialect's query {@code name}, as a long, or null for none. */
    Long queryLong(String name, Object... args) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql(name))) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                long v = rs.getLong(1);
                return rs.wasNull() ? null : v;
            }
        }
    }

    /**
     * fence's bookkeeping as the dialect's {@code bookkeeping_rows} and {@code bookkeeping_objects} read it:
     * the fence rows, who applied what, and the objects that make fence's tables what they are (the tables
     * themselves, their columns, constraints and indexes, triggers, rules, policies; on MariaDB each table's
     * {@code SHOW CREATE TABLE}), one text line each, sorted. Other resources' rows at token 0 are left
     * out: a concurrent run of another resource seeds one and takes it back, and it fences nothing. Two reads
     * are equal when nothing of it changed between them; empty for a dialect that reads none.
     */
    java.util.List<String> bookkeeping(String resource) throws SQLException {
        java.util.List<String> out = new java.util.ArrayList<>();
        if (has("bookkeeping_rows")) {
            lines(out, "bookkeeping_rows", resource);
        }
        if (has("bookkeeping_objects")) {
            switch (url.kind()) {
                case POSTGRESQL -> lines(out, "bookkeeping_objects", table("fence_tokens"), table("schema_migrations"));
                case MARIADB -> {
                    lines(out, "bookkeeping_objects", unquoted(schema));
                    for (String name : java.util.List.of("show_fence_tokens", "show_schema_migrations")) {
                        try (Statement st = connection.createStatement();
                                ResultSet rs = st.executeQuery(sql(name))) {
                            while (rs.next()) {
                                out.add("create " + rs.getString(2)); // the table's name, then its definition
                            }
                        }
                    }
                }
                case SQLITE -> lines(out, "bookkeeping_objects");
            }
        }
        java.util.Collections.sort(out);
        return out;
    }

    private void lines(java.util.List<String> out, String name, Object... args) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql(name))) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(String.valueOf(rs.getString(1)));
                }
            }
        }
    }

    /** A name {@link #quote} quoted, as it was. */
    private static String unquoted(String quoted) {
        char q = quoted.charAt(0);
        return quoted.substring(1, quoted.length() - 1).replace("" + q + q, "" + q);
    }

    /**
     * The open transaction as a migration's statements may change it: its id, and whether backslashes in
     * {@code '…'} are characters ({@code standard_conforming_strings}).
     */
    record TransactionState(long id, boolean standardStrings) {}

    /**
     * The state of the open transaction (its id assigned if it had none), or null for a dialect that has no
     * way to read it (SQLite, whose splitter and engine read quotes alike; MariaDB, whose claim commits on
     * its own before the migration runs).
     */
    TransactionState transactionState() throws SQLException {
        if (!has("transaction_state")) {
            return null;
        }
        try (Statement s = connection.createStatement();
                ResultSet rs = s.executeQuery(sql("transaction_state"))) {
            if (!rs.next()) {
                throw new InternalException("transaction_state returned no row");
            }
            return new TransactionState(rs.getLong(1), "on".equalsIgnoreCase(rs.getString(2)));
        }
    }

    /**
     * The columns of {@code table} in fence's schema ({@link #table}; lower-cased name to JDBC type), or null
     * when there is no such table. Runs in autocommit mode, where a failed statement spoils nothing.
     */
    Map<String, Integer> columnsOf(String table) {
        try (Statement s = connection.createStatement();
                ResultSet rs = s.executeQuery("SELECT * FROM " + table(table) + " WHERE 1 = 0")) {
            ResultSetMetaData md = rs.getMetaData();
            Map<String, Integer> out = new HashMap<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                out.put(md.getColumnName(i).toLowerCase(Locale.ROOT), md.getColumnType(i));
            }
            return out;
        } catch (SQLException e) {
            if (isConnectionFailure(e)) {
                throw failure(url, e);
            }
            return null;
        }
    }

    static boolean isNumeric(int jdbcType) {
        return switch (jdbcType) {
            case Types.BIGINT, Types.INTEGER, Types.SMALLINT, Types.TINYINT, Types.NUMERIC, Types.DECIMAL -> true;
            default -> false;
        };
    }

    /** True for a column whose values compare as bytes ({@code VARBINARY}, {@code BINARY}). */
    static boolean isBinary(Integer jdbcType) {
        return jdbcType != null
                && (jdbcType == Types.VARBINARY || jdbcType == Types.BINARY || jdbcType == Types.LONGVARBINARY);
    }

    void rollbackQuietly() {
        try {
            if (!connection.getAutoCommit()) {
                connection.rollback();
            }
        } catch (SQLException e) {
            // The connection is gone; the server rolls back what it had.
        }
    }

    @Override
    public void close() {
        closeQuietly(connection);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // Nothing to do about a connection that will not close.
        }
    }

    private static void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            Object a = args[i];
            if (a instanceof Long l) {
                ps.setLong(i + 1, l);
            } else if (a instanceof Integer n) {
                ps.setInt(i + 1, n);
            } else if (a == null) {
                ps.setNull(i + 1, Types.VARCHAR);
            } else {
                ps.setString(i + 1, a.toString());
            }
        }
    }

    private static final Map<DatabaseUrl.Kind, Map<String, String>> STATEMENTS =
            new java.util.EnumMap<>(DatabaseUrl.Kind.class);

    private static synchronized Map<String, String> statements(DatabaseUrl.Kind kind) {
        return STATEMENTS.computeIfAbsent(kind, k -> {
            String name = "dev/fence/migrate/" + k.name().toLowerCase(Locale.ROOT) + ".sql";
            try {
                byte[] bytes = JarResources.read(Database.class, name);
                if (bytes == null) {
                    throw new InternalException("missing resource " + name);
                }
                return SqlScripts.parseNamed(new String(bytes, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new InternalException("cannot read " + name + ": " + e);
            }
        });
    }
}
