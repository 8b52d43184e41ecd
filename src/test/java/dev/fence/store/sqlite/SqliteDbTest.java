package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;
import org.sqlite.SQLiteOpenMode;

/** The store's connection through the driver's native binding, on a real file. */
class SqliteDbTest {
    @TempDir
    Path tmp;

    private SqliteDb db;

    @BeforeEach
    void open() throws SQLException {
        db = SqliteDb.open(tmp.resolve("t.db"), SqliteDb.Mode.CREATE, 3000);
        db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, b BLOB)");
    }

    @AfterEach
    void close() throws SQLException {
        db.close();
    }

    @Test
    void valuesGoInAndComeBackAsWritten() throws SQLException {
        try (SqliteDb.Statement insert = db.prepare("INSERT INTO t (id, name, n, b) VALUES (?, ?, ?, ?)")) {
            insert.integer(1, 1)
                    .text(2, "zoë ✓")
                    .integer(3, Long.MIN_VALUE)
                    .blob(4, new byte[] {0, 1, -1})
                    .update();
            // A statement runs again with new values; those not bound again are NULL.
            insert.integer(1, 2).text(2, null).integerOrNull(3, null).update();
        }
        try (SqliteDb.Statement select = db.prepare("SELECT id, name, n, b FROM t ORDER BY id")) {
            assertTrue(select.next());
            assertEquals("zoë ✓", select.getText("name"));
            assertEquals(Long.MIN_VALUE, select.getLong("n"));
            assertEquals(Long.MIN_VALUE, select.getLongOrNull("n"));
            assertArrayEquals(new byte[] {0, 1, -1}, select.getBlob("b"));
            assertTrue(select.next());
            assertEquals(2, select.getLong("id"));
            assertNull(select.getText("name"));
            assertNull(select.getLongOrNull("n"));
            assertNull(select.getBlob("b"));
            assertFalse(select.next());
            SQLException unknown = assertThrows(SQLException.class, () -> select.getLong("nope"));
            assertTrue(unknown.getMessage().contains("no column nope"), unknown.getMessage());
        }
        assertEquals(2, db.queryLong("SELECT count(*) FROM t"));
        assertEquals("zoë ✓", db.queryText("SELECT name FROM t WHERE id = 1"));
        assertNull(db.queryText("SELECT name FROM t WHERE id = 3"));
    }

    @Test
    void whatItWritesIsWhatJdbcReads() throws SQLException {
        try (SqliteDb.Statement insert = db.prepare("INSERT INTO t (id, name, n) VALUES (?, ?, ?)")) {
            insert.value(1, 7).value(2, "seven").value(3, 7L).update();
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + tmp.resolve("t.db"));
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT id, name, n FROM t")) {
            assertTrue(rs.next());
            assertEquals(7, rs.getLong("id"));
            assertEquals("seven", rs.getString("name"));
            assertEquals(7, rs.getLong("n"));
        }
    }

    @Test
    void failuresCarrySqlitesResultCode() throws SQLException {
        SQLiteException syntax = assertThrows(SQLiteException.class, () -> db.prepare("SELEC 1"));
        assertEquals(SQLiteErrorCode.SQLITE_ERROR, syntax.getResultCode());
        assertTrue(syntax.getMessage().contains("syntax error"), syntax.getMessage());

        db.exec("INSERT INTO t (id) VALUES (1)");
        try (SqliteDb.Statement duplicate = db.prepare("INSERT INTO t (id) VALUES (1)")) {
            SQLiteException e = assertThrows(SQLiteException.class, duplicate::update);
            assertEquals(SQLiteErrorCode.SQLITE_CONSTRAINT_PRIMARYKEY, e.getResultCode());
        }

        assertThrows(IllegalArgumentException.class, () -> {
            try (SqliteDb.Statement s = db.prepare("SELECT ?")) {
                s.value(1, 1.5);
            }
        });
    }

    @Test
    void aWriterWaitsForTheBusyTimeoutThenFailsBusy() throws Exception {
        try (Connection other = DriverManager.getConnection("jdbc:sqlite:" + tmp.resolve("t.db"));
                Statement s = other.createStatement()) {
            s.execute("BEGIN EXCLUSIVE");
            db.busyTimeout(200);
            long start = System.nanoTime();
            SQLiteException e = assertThrows(SQLiteException.class, () -> db.exec("BEGIN IMMEDIATE"));
            long waitedMs = (System.nanoTime() - start) / 1_000_000;
            assertEquals(5, e.getResultCode().code & 0xff, "SQLITE_BUSY: " + e.getResultCode());
            assertTrue(waitedMs >= 150, "waited " + waitedMs + " ms");
            s.execute("ROLLBACK");
        }
        db.exec("BEGIN IMMEDIATE");
        db.exec("COMMIT");
    }

    @Test
    void aCachedStatementIsCompiledOnceAndStartsEachUseAfresh() throws SQLException {
        String insert = "INSERT INTO t (id, name, n) VALUES (?, ?, ?)";
        try (SqliteDb.Statement s = db.cached(insert)) {
            s.integer(1, 1).text(2, "one").integer(3, 1).update();
        }
        SqliteDb.Statement first;
        try (SqliteDb.Statement s = db.cached(insert)) {
            first = s;
            // The first use's values are gone: what is not bound again is NULL.
            s.integer(1, 2).update();
        }
        try (SqliteDb.Statement s = db.cached(insert)) {
            assertSame(first, s);
        }
        String select = "SELECT id, name FROM t ORDER BY id";
        try (SqliteDb.Statement s = db.cached(select)) {
            assertTrue(s.next());
            assertEquals("one", s.getText("name"));
            // Left mid-way: closing resets it, so that the next use starts from its first row...
        }
        try (SqliteDb.Statement s = db.cached(select)) {
            assertTrue(s.next());
            assertEquals(1, s.getLong("id"));
            assertTrue(s.next());
            assertNull(s.getText("name"));
            assertFalse(s.next());
        }
        // ...and no open read keeps a writer from committing, nor the connection from closing.
        db.run("BEGIN IMMEDIATE");
        db.run("DELETE FROM t");
        db.run("COMMIT");
        assertEquals(0, db.queryLong("SELECT count(*) FROM t"));
        db.close();
        db = SqliteDb.open(tmp.resolve("t.db"), SqliteDb.Mode.CREATE, 3000);
    }

    @Test
    void eachModeOpensAsTheDriversOwnSettingsWould() throws SQLException {
        // The store opens without the driver's settings object; its flags must stay the ones those settings give.
        assertEquals(new SQLiteConfig().getOpenModeFlags(), SqliteDb.Mode.CREATE.flags);
        SQLiteConfig readOnly = new SQLiteConfig();
        readOnly.setReadOnly(true);
        assertEquals(readOnly.getOpenModeFlags(), SqliteDb.Mode.READ_ONLY.flags);
        SQLiteConfig existing = new SQLiteConfig();
        existing.resetOpenMode(SQLiteOpenMode.CREATE);
        assertEquals(existing.getOpenModeFlags(), SqliteDb.Mode.EXISTING.flags);

        // ...and do what they say: only CREATE makes a missing file; READ_ONLY writes nothing.
        Path missing = tmp.resolve("missing.db");
        assertThrows(SQLException.class, () -> SqliteDb.open(missing, SqliteDb.Mode.EXISTING, 0));
        assertThrows(SQLException.class, () -> SqliteDb.open(missing, SqliteDb.Mode.READ_ONLY, 0));
        assertFalse(missing.toFile().exists());
        db.exec("INSERT INTO t (id) VALUES (7)");
        try (SqliteDb reader = SqliteDb.open(tmp.resolve("t.db"), SqliteDb.Mode.READ_ONLY, 0)) {
            assertEquals(1, reader.queryLong("SELECT count(*) FROM t"));
            SQLiteException e = assertThrows(SQLiteException.class, () -> reader.exec("DELETE FROM t"));
            assertEquals(SQLiteErrorCode.SQLITE_READONLY.code, e.getResultCode().code & 0xff);
        }
    }
}
