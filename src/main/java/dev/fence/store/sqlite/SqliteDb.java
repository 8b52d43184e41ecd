package dev.fence.store.sqlite;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.sqlite.SQLiteOpenMode;
import org.sqlite.core.DirectAccess;
import org.sqlite.core.NativeDB;

/**
 * One connection to a SQLite file through the driver's native binding ({@link DirectAccess}), with the
 * little of JDBC the store uses: statements with numbered parameters, rows read by column name, explicit
 * transactions. Values are SQLite's own: text, 64-bit integers, blobs and NULL.
 *
 * <p>Not thread-safe: the store uses a connection under its lock, one call at a time, and finishes every
 * statement it prepares before the next call.
 *
 * <p>The store's fixed statements are {@link #cached}: each is compiled once per connection and reset after
 * each use. Compiling a statement costs more than running it on a small table, and a long-running server
 * runs the same few statements for every verdict while it holds the store's lock.
 */
final class SqliteDb implements AutoCloseable {
    private final NativeDB db;

    /** The compiled fixed statements, by their SQL; finalized when the connection closes. */
    private final Map<String, Statement> cache = new HashMap<>();

    private SqliteDb(NativeDB db) {
        this.db = db;
    }

    /** How {@link #open} opens a file: its SQLite open flags (those of the driver's settings of each kind). */
    enum Mode {
        /** Read and write, creating the file when it is missing. */
        CREATE(SQLiteOpenMode.READWRITE.flag | SQLiteOpenMode.CREATE.flag | SQLiteOpenMode.OPEN_URI.flag),
        /** Read and write a file that is there. */
        EXISTING(SQLiteOpenMode.READWRITE.flag | SQLiteOpenMode.OPEN_URI.flag),
        /** Read a file that is there. */
        READ_ONLY(SQLiteOpenMode.READONLY.flag | SQLiteOpenMode.OPEN_URI.flag);

        final int flags;

        Mode(int flags) {
            this.flags = flags;
        }
    }

    /** Opens {@code file} as {@code mode} says, waiting {@code busyTimeoutMillis} for other connections' locks. */
    static SqliteDb open(Path file, Mode mode, int busyTimeoutMillis) throws SQLException {
        return new SqliteDb(DirectAccess.open(file.toString(), mode.flags, busyTimeoutMillis));
    }

    /** How long a statement waits for another connection's lock before failing with SQLITE_BUSY, in ms. */
    void busyTimeout(int millis) throws SQLException {
        db.busy_timeout(millis);
    }

    /** Runs one or more statements that return no rows, compiling them anew (for scripts and one-offs). */
    void exec(String sql) throws SQLException {
        DirectAccess.exec(db, sql);
    }

    /** Runs one fixed statement that returns no rows (such as {@code BEGIN} or {@code COMMIT}), {@link #cached}. */
    void run(String sql) throws SQLException {
        try (Statement s = cached(sql)) {
            s.update();
        }
    }

    /** The rows the last INSERT, UPDATE or DELETE run on this connection changed. */
    long changes() {
        return DirectAccess.changes(db);
    }

    /** Prepares one statement, to be finalized when closed: for SQL built per call. */
    Statement prepare(String sql) throws SQLException {
        return new Statement(DirectAccess.prepare(db, sql), false);
    }

    /**
     * The connection's compiled copy of one fixed statement, compiled on first use; closing it resets it
     * and clears its parameters instead of finalizing it. Use it for one statement at a time: the copy is
     * shared by every use of the same SQL on this connection.
     */
    Statement cached(String sql) throws SQLException {
        Statement s = cache.get(sql);
        if (s == null) {
            s = new Statement(DirectAccess.prepare(db, sql), true);
            cache.put(sql, s);
        }
        return s;
    }

    /**
     * The first column of the first row of {@code sql} (such as a PRAGMA) as text, {@link #cached}; null
     * when no row.
     */
    String queryText(String sql) throws SQLException {
        try (Statement s = cached(sql)) {
            return s.next() ? DirectAccess.columnText(db, s.handle, 0) : null;
        }
    }

    /** The first column of the first row of {@code sql} as an integer, {@link #cached}; 0 when no row. */
    long queryLong(String sql) throws SQLException {
        try (Statement s = cached(sql)) {
            return s.next() ? DirectAccess.columnLong(db, s.handle, 0) : 0;
        }
    }

    /**
     * Finalizes the cached statements and closes the connection (SQLite checkpoints the file when it was the
     * last one).
     */
    @Override
    public void close() throws SQLException {
        try {
            for (Statement s : cache.values()) {
                s.finalizeQuietly();
            }
            cache.clear();
        } finally {
            DirectAccess.close(db);
        }
    }

    /** A prepared statement: bind its parameters (counted from 1), then read its rows or run it. */
    final class Statement implements AutoCloseable {
        private final long handle;
        private final boolean cached;
        private Map<String, Integer> columns;
        private boolean closed;

        private Statement(long handle, boolean cached) {
            this.handle = handle;
            this.cached = cached;
        }

        /** Binds text, or NULL for null. */
        Statement text(int index, String value) throws SQLException {
            DirectAccess.bindText(db, handle, index, value);
            return this;
        }

        /** Binds an integer. */
        Statement integer(int index, long value) throws SQLException {
            DirectAccess.bindLong(db, handle, index, value);
            return this;
        }

        /** Binds an integer, or NULL for null. */
        Statement integerOrNull(int index, Long value) throws SQLException {
            if (value == null) {
                DirectAccess.bindNull(db, handle, index);
            } else {
                DirectAccess.bindLong(db, handle, index, value);
            }
            return this;
        }

        /** Binds a blob, or NULL for null. */
        Statement blob(int index, byte[] value) throws SQLException {
            DirectAccess.bindBlob(db, handle, index, value);
            return this;
        }

        /** Binds a string as text, or an integral number as an integer. */
        Statement value(int index, Object value) throws SQLException {
            if (value instanceof String s) {
                return text(index, s);
            }
            if (value instanceof Long || value instanceof Integer) {
                return integer(index, ((Number) value).longValue());
            }
            throw new IllegalArgumentException("not a text or integer value: " + value);
        }

        /** Steps to the next row: false once there is none. */
        boolean next() throws SQLException {
            return DirectAccess.step(db, handle) == DirectAccess.ROW;
        }

        /** Runs a statement that returns no rows, then readies it to run again with new values. */
        void update() throws SQLException {
            try {
                while (DirectAccess.step(db, handle) == DirectAccess.ROW) {
                    // An INSERT ... RETURNING would land here; the store's statements return none.
                }
            } finally {
                DirectAccess.reset(db, handle);
            }
        }

        /** The current row's value of {@code column} as an integer (0 for NULL). */
        long getLong(String column) throws SQLException {
            return DirectAccess.columnLong(db, handle, index(column));
        }

        /** The current row's value of {@code column} as an integer, or null for NULL. */
        Long getLongOrNull(String column) throws SQLException {
            int i = index(column);
            return DirectAccess.columnType(db, handle, i) == DirectAccess.NULL
                    ? null
                    : DirectAccess.columnLong(db, handle, i);
        }

        /** The current row's value of {@code column} as text, or null for NULL. */
        String getText(String column) throws SQLException {
            return DirectAccess.columnText(db, handle, index(column));
        }

        /** The current row's value of {@code column} as a blob, or null for NULL. */
        byte[] getBlob(String column) throws SQLException {
            return DirectAccess.columnBlob(db, handle, index(column));
        }

        private int index(String column) throws SQLException {
            if (columns == null) {
                int n = DirectAccess.columnCount(db, handle);
                Map<String, Integer> m = new HashMap<>(n * 2);
                for (int i = 0; i < n; i++) {
                    m.putIfAbsent(DirectAccess.columnName(db, handle, i), i);
                }
                columns = m;
            }
            Integer i = columns.get(column);
            if (i == null) {
                throw new SQLException("no column " + column + " in " + columns.keySet());
            }
            return i;
        }

        /**
         * Finalizes the statement (closing twice does nothing), or readies a {@link #cached} one for its next
         * use. A cached statement that cannot be reset is dropped from the cache and finalized, so that no
         * later call inherits its state.
         */
        @Override
        public void close() throws SQLException {
            if (closed) {
                return;
            }
            if (!cached) {
                closed = true;
                DirectAccess.finalizeStatement(db, handle);
                return;
            }
            try {
                DirectAccess.reset(db, handle);
            } catch (SQLException | RuntimeException e) {
                cache.values().remove(this);
                finalizeQuietly();
                throw e;
            }
        }

        private void finalizeQuietly() {
            if (!closed) {
                closed = true;
                try {
                    DirectAccess.finalizeStatement(db, handle);
                } catch (SQLException | RuntimeException e) {
                    // sqlite3_finalize frees the statement even when it reports the last step's error.
                }
            }
        }
    }
}
