package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.InvalidInputException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Splitting migration files: where statements end, which line each starts on, and the URLs of --db. */
class SqlStatementsTest {
    @Test
    void splitsAtSemicolonsOutsideQuotesCommentsAndDollarQuotes() {
        String sql = "-- header; not a statement\n"
                + "CREATE TABLE t (a TEXT DEFAULT 'x;y');\n"
                + "\n"
                + "/* a; comment */ INSERT INTO t VALUES ('it''s; fine');\n"
                + "CREATE FUNCTION f() RETURNS int AS $body$\n"
                + "BEGIN\n"
                + "  RETURN 1;\n"
                + "END;\n"
                + "$body$ LANGUAGE plpgsql;\n"
                + "SELECT $1 FROM t\n";
        List<SqlStatements.Statement> s = SqlStatements.split(sql);
        assertEquals(4, s.size(), s.toString());
        assertEquals(2, s.get(0).line());
        assertEquals(4, s.get(1).line());
        assertEquals(5, s.get(2).line());
        assertTrue(s.get(2).sql().contains("RETURN 1;"));
        assertEquals(10, s.get(3).line());
        assertEquals(List.of(), SqlStatements.split("-- only a comment;\n\n"));
    }

    @Test
    void anOpenQuoteNamesItsLine() {
        InvalidInputException e =
                assertThrows(InvalidInputException.class, () -> SqlStatements.split("SELECT 1;\nSELECT 'open;\n"));
        assertTrue(e.getMessage().startsWith("line 2"), e.getMessage());
    }

    @Test
    void databaseUrlsMaskTheirPasswords() {
        DatabaseUrl pg = DatabaseUrl.parse("postgresql://app:s%40cret@127.0.0.1:5432/app", Path.of("/w"));
        assertEquals(DatabaseUrl.Kind.POSTGRESQL, pg.kind());
        assertEquals("jdbc:postgresql://127.0.0.1:5432/app", pg.jdbcUrl());
        assertEquals("s@cret", pg.password());
        assertEquals("postgresql://app:***@127.0.0.1:5432/app", pg.describe());
        DatabaseUrl my = DatabaseUrl.parse("mysql://root@db:3306/shop", Path.of("/w"));
        assertEquals(DatabaseUrl.Kind.MARIADB, my.kind());
        assertEquals("jdbc:mariadb://db:3306/shop", my.jdbcUrl());
        DatabaseUrl lite = DatabaseUrl.parse("sqlite:data/app.db", Path.of("/w"));
        assertEquals("jdbc:sqlite:/w/data/app.db", lite.jdbcUrl());
        assertThrows(InvalidInputException.class, () -> DatabaseUrl.parse("oracle://x@y/z", Path.of("/w")));
        InvalidInputException e = assertThrows(
                InvalidInputException.class, () -> DatabaseUrl.parse("postgresql://u:pw@host", Path.of("/w")));
        assertTrue(!e.getMessage().contains("pw@"), e.getMessage());
    }

    @Test
    void transactionControlIsRecognisedByItsLeadingKeywordWhateverTheCaseOrComments() {
        for (String sql : List.of(
                "COMMIT",
                "commit and chain",
                "  -- done\n  Commit Work",
                "/* x */ BEGIN",
                "begin transaction",
                "END",
                "end transaction",
                "ROLLBACK",
                "rollback to savepoint s",
                "ABORT",
                "start transaction read write",
                "SAVEPOINT s1",
                "release savepoint s1",
                "PREPARE TRANSACTION 'x'",
                "COMMIT PREPARED 'x'",
                "XA START 'x'",
                "SET autocommit = 1",
                "set @@session.autocommit=0",
                "SET SESSION autocommit = 1")) {
            assertTrue(SqlStatements.transactionControl(sql) != null, sql);
        }
        for (String sql : List.of(
                "CREATE TABLE commits (id INT)",
                "INSERT INTO t VALUES ('COMMIT')",
                "-- COMMIT\nSELECT 1",
                "PREPARE q AS SELECT 1",
                "SET search_path = app",
                "UPDATE t SET autocommit = 1",
                "STARTS",
                "ENDING")) {
            assertEquals(null, SqlStatements.transactionControl(sql), sql);
        }
    }
}
