package org.sqlite.core;

import java.sql.SQLException;

/**
 * fence's entry to sqlite-jdbc's native binding ({@link NativeDB}) without the driver's JDBC layer; it
 * lives in the driver's package because the binding's statement calls are package-private there. Each
 * method makes the call of the SQLite C API named beside it and reports a failure as the driver does, with
 * an {@link org.sqlite.SQLiteException} carrying SQLite's result code and message.
 *
 * <p>Why: the JDBC layer links a few dozen lambdas and compiles its regular expressions when a process
 * first uses it, which a hook (a new JVM for every push) paid on every push: about 20 ms on JDK 17. fence
 * needs none of what the layer adds (type mapping, metadata, batches), only prepared statements, and
 * {@code dev.fence.store.sqlite.SqliteDb} builds those on this class. The driver's own tests do not cover
 * this use, fence's do: {@code SqliteDriverPatchTest} runs each call against the driver's JDBC path on the
 * same file, and the store contract suite runs on it.
 *
 * <p>This class and fence's other classes in the driver's packages ({@code SQLiteConnectionConfig},
 * {@code util.LoggerFactory}) are written for one driver version, {@link #PATCHED_FOR}; the pom's {@code
 * sqlite.version} is the one place that chooses the driver, and the build fails when the two differ.
 *
 * <p>Thread-safety: the binding synchronizes every call on its connection object; a statement handle must
 * still be used by one thread at a time.
 */
public final class DirectAccess {
    /** {@code sqlite3_step}: a row is ready. */
    public static final int ROW = Codes.SQLITE_ROW;

    /** {@code sqlite3_step}: the statement has run to completion. */
    public static final int DONE = Codes.SQLITE_DONE;

    /** {@code sqlite3_column_type}: the value is NULL. */
    public static final int NULL = Codes.SQLITE_NULL;

    /**
     * The sqlite-jdbc version fence's classes in the driver's packages were written for and checked
     * against. Not a second pin: the pom's {@code sqlite.version} chooses the driver, and {@code
     * SqliteDriverPatchTest} fails the build when the driver it chose is another version, so that an upgrade
     * re-reads the driver's own classes of these names before changing this.
     */
    public static final String PATCHED_FOR = "3.51.1.0";

    private DirectAccess() {}

    /**
     * The operator's message for a {@link LinkageError} out of this class: the driver on the class path
     * lacks a call this class makes, which only another driver version than {@link #PATCHED_FOR} does.
     */
    public static String mismatch(LinkageError e) {
        String version;
        try {
            version = org.sqlite.SQLiteJDBCLoader.getVersion();
        } catch (RuntimeException | LinkageError unknown) {
            version = "of an unknown version";
        }
        return "sqlite-jdbc " + version + " is on the class path, but fence's SQLite binding was written for "
                + PATCHED_FOR + " (" + e + "); run the fence jar as built, whose driver is that version";
    }

    /**
     * {@code sqlite3_open_v2}: opens (or creates) the database file with {@code openFlags} ({@link
     * org.sqlite.SQLiteOpenMode}'s flags) and waits for other connections' locks {@code busyTimeoutMillis}
     * (as {@code DB.open} does with a {@link org.sqlite.SQLiteConfig}'s settings, loading extensions left off); loads
     * the native library first if the process has not.
     *
     * <p>Without a {@code SQLiteConfig}: making a process's first one initialises the driver's tables of
     * every pragma it knows, a millisecond and a half of a hook (bench: "Java hook, SQLite" rows), and fence
     * sets its pragmas itself. The connection's {@code DB.getConfig()} is therefore null, which only the
     * driver's JDBC layer reads; {@code SqliteDriverPatchTest} runs every call here on such a connection.
     */
    public static NativeDB open(String file, int openFlags, int busyTimeoutMillis) throws SQLException {
        boolean loaded;
        try {
            loaded = NativeDB.load();
        } catch (Exception e) {
            throw new SQLException("sqlite-jdbc's native library could not be loaded: " + e, e);
        }
        if (!loaded) {
            throw new SQLException("sqlite-jdbc's native library could not be loaded");
        }
        NativeDB db = new NativeDB(null, file, null);
        db._open(file, openFlags);
        db.enable_load_extension(false);
        db.busy_timeout(busyTimeoutMillis);
        return db;
    }

    /** {@code sqlite3_exec} without result rows. */
    public static void exec(NativeDB db, String sql) throws SQLException {
        db._exec_utf8(NativeDB.stringToUtf8ByteArray(sql));
    }

    /** {@code sqlite3_prepare_v2}: the statement's handle, to {@link #finalizeStatement} once done. */
    public static long prepare(NativeDB db, String sql) throws SQLException {
        return db.prepare_utf8(NativeDB.stringToUtf8ByteArray(sql));
    }

    /** {@code sqlite3_changes64}: the rows the connection's last INSERT, UPDATE or DELETE changed. */
    public static long changes(NativeDB db) {
        return db.changes();
    }

    /** {@code sqlite3_bind_text}, or {@code sqlite3_bind_null} for null; {@code index} counts from 1. */
    public static void bindText(NativeDB db, long statement, int index, String value) throws SQLException {
        check(
                db,
                value == null
                        ? db.bind_null(statement, index)
                        : db.bind_text_utf8(statement, index, NativeDB.stringToUtf8ByteArray(value)));
    }

    /** {@code sqlite3_bind_int64}. */
    public static void bindLong(NativeDB db, long statement, int index, long value) throws SQLException {
        check(db, db.bind_long(statement, index, value));
    }

    /** {@code sqlite3_bind_null}. */
    public static void bindNull(NativeDB db, long statement, int index) throws SQLException {
        check(db, db.bind_null(statement, index));
    }

    /** {@code sqlite3_bind_blob}, or {@code sqlite3_bind_null} for null. */
    public static void bindBlob(NativeDB db, long statement, int index, byte[] value) throws SQLException {
        check(db, value == null ? db.bind_null(statement, index) : db.bind_blob(statement, index, value));
    }

    /** {@code sqlite3_step}: {@link #ROW} or {@link #DONE}; an error is thrown. */
    public static int step(NativeDB db, long statement) throws SQLException {
        int rc = db.step(statement);
        if (rc != ROW && rc != DONE) {
            db.throwex(rc);
        }
        return rc;
    }

    /** {@code sqlite3_reset} and {@code sqlite3_clear_bindings}: ready to run again with new values. */
    public static void reset(NativeDB db, long statement) throws SQLException {
        db.reset(statement);
        db.clear_bindings(statement);
    }

    /** {@code sqlite3_column_count}. */
    public static int columnCount(NativeDB db, long statement) throws SQLException {
        return db.column_count(statement);
    }

    /** {@code sqlite3_column_name}; {@code column} counts from 0. */
    public static String columnName(NativeDB db, long statement, int column) throws SQLException {
        return db.column_name(statement, column);
    }

    /** {@code sqlite3_column_type}: {@link #NULL} for a NULL value. */
    public static int columnType(NativeDB db, long statement, int column) throws SQLException {
        return db.column_type(statement, column);
    }

    /** {@code sqlite3_column_int64} (0 for NULL). */
    public static long columnLong(NativeDB db, long statement, int column) throws SQLException {
        return db.column_long(statement, column);
    }

    /** {@code sqlite3_column_text}, null for NULL. */
    public static String columnText(NativeDB db, long statement, int column) throws SQLException {
        return db.column_text(statement, column);
    }

    /** {@code sqlite3_column_blob}, null for NULL. */
    public static byte[] columnBlob(NativeDB db, long statement, int column) throws SQLException {
        return db.column_blob(statement, column);
    }

    /** {@code sqlite3_finalize}; the handle is not used again. */
    public static void finalizeStatement(NativeDB db, long statement) throws SQLException {
        db.finalize(statement);
    }

    /**
     * {@code sqlite3_close}: every statement must have been finalized. {@code DB.close} would also close
     * the JDBC layer's statements (this class makes none) and set the connection's closed flag, an {@code
     * AtomicBoolean}, whose first write in a JDK 17 process links VarHandles: about half a millisecond,
     * which a hook paid at its end.
     */
    public static void close(NativeDB db) throws SQLException {
        db._close();
    }

    private static void check(NativeDB db, int rc) throws SQLException {
        if (rc != Codes.SQLITE_OK) {
            db.throwex(rc);
        }
    }
}
