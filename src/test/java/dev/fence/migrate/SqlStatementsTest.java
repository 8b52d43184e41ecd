package dev.fence.migrate;

import static dev.fence.migrate.DatabaseUrl.Kind.MARIADB;
import static dev.fence.migrate.DatabaseUrl.Kind.POSTGRESQL;
import static dev.fence.migrate.DatabaseUrl.Kind.SQLITE;
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
        List<SqlStatements.Statement> s = SqlStatements.split(sql, POSTGRESQL);
        assertEquals(4, s.size(), s.toString());
        assertEquals(2, s.get(0).line());
        assertEquals(4, s.get(1).line());
        assertEquals(5, s.get(2).line());
        assertTrue(s.get(2).sql().contains("RETURN 1;"));
        assertEquals(10, s.get(3).line());
        assertEquals(List.of(), SqlStatements.split("-- only a comment;\n\n", POSTGRESQL));
    }

    /**
     * PostgreSQL and its driver end a -- comment at a lone carriage return too: a COMMIT after one is a
     * statement of its own, which the screen must see (else it would take it for comment).
     */
    @Test
    void aPostgresLineCommentEndsAtACarriageReturn() {
        List<SqlStatements.Statement> s =
                SqlStatements.split("SELECT 1; -- note\rCOMMIT; SELECT 2\n+ 1;\n", POSTGRESQL);
        assertEquals(
                List.of("SELECT 1", "-- note\rCOMMIT", "SELECT 2\n+ 1"),
                s.stream().map(SqlStatements.Statement::sql).toList());
        assertEquals("COMMIT", SqlStatements.transactionControl(s.get(1)));
        // SQLite's comment runs to the newline only.
        assertEquals(
                2,
                SqlStatements.split("SELECT 1; -- note\rCOMMIT; SELECT 2\n+ 1;\n", SQLITE)
                        .size());
    }

    /**
     * An E'…' string is read with backslash escapes only where the driver reads one: after whitespace, a
     * double quote or an operator character, never at the start of the statement the driver is sent, nor
     * after a quote; elsewhere fence reads a standard string, as the driver does, and sees the ; it splits at.
     */
    @Test
    void aPostgresEscapeStringIsOneWhereTheDriverSeesOne() {
        for (String sql :
                List.of("E'\\' ; COMMIT ; --'", "SELECT 'a'E'\\' ; COMMIT ; --'", "SELECT 1 {E'\\' ; COMMIT ; --'")) {
            List<SqlStatements.Statement> s = SqlStatements.split(sql, POSTGRESQL);
            assertEquals(2, s.size(), sql + " → " + s);
            assertEquals("COMMIT", SqlStatements.transactionControl(s.get(1)), sql);
        }
        for (String sql : List.of(
                "SELECT E'\\' ; still quoted'",
                "SELECT (E'\\' ; still quoted')",
                "SELECT 1,e'\\' ; still quoted'",
                "/* c */E'\\' ; still quoted'",
                "SELECT \"x\"E'\\' ; still quoted'")) {
            assertEquals(1, SqlStatements.split(sql, POSTGRESQL).size(), sql);
        }
    }

    @Test
    void anOpenQuoteNamesItsLine() {
        InvalidInputException e = assertThrows(
                InvalidInputException.class, () -> SqlStatements.split("SELECT 1;\nSELECT 'open;\n", POSTGRESQL));
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

    /**
     * Connection parameters were dropped before the driver saw them, while messages (and the model, through
     * fence mcp) showed the URL whole: a {@code password=} in plain text, an {@code sslmode=require} that
     * never held. They are refused now, and no message shows them.
     */
    @Test
    void connectionParametersAreRefusedAndNeverShown() {
        for (String url : List.of(
                "mariadb://root@127.0.0.1:3306/shop?password=S3cretPW",
                "postgresql://127.0.0.1:5432/x?user=postgres&password=S3cretPW",
                "postgresql://app@127.0.0.1:5432/app?sslmode=require&password=S3cretPW",
                "oracle://x@y/z?password=S3cretPW")) {
            InvalidInputException e =
                    assertThrows(InvalidInputException.class, () -> DatabaseUrl.parse(url, Path.of("/w")), url);
            assertTrue(!e.getMessage().contains("S3cretPW"), e.getMessage());
        }
        InvalidInputException e = assertThrows(
                InvalidInputException.class,
                () -> DatabaseUrl.parse("postgresql://app@db:5432/app?sslmode=require", Path.of("/w")));
        assertTrue(e.getMessage().contains("takes no connection parameters"), e.getMessage());
        // SQLite's driver reads them as the connection's settings, over fence's own (its attach limit).
        InvalidInputException lite = assertThrows(
                InvalidInputException.class,
                () -> DatabaseUrl.parse("sqlite:app.db?limit_attached=10&password=S3cretPW", Path.of("/w")));
        assertTrue(
                !lite.getMessage().contains("S3cretPW") && !lite.getMessage().contains("limit_attached"),
                lite.getMessage());
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
            for (DatabaseUrl.Kind kind : DatabaseUrl.Kind.values()) {
                assertTrue(control(sql, kind) != null, kind + ": " + sql);
            }
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
            for (DatabaseUrl.Kind kind : DatabaseUrl.Kind.values()) {
                assertEquals(null, control(sql, kind), kind + ": " + sql);
            }
        }
    }

    /**
     * PostgreSQL (and the driver, which splits at each ; it sees) read {@code $} after an identifier
     * character as part of the identifier, not as a dollar quote: {@code x$a$} hides nothing.
     */
    @Test
    void aDollarAfterAnIdentifierCharacterStartsNoDollarQuote() {
        List<SqlStatements.Statement> s =
                SqlStatements.split("SELECT 1 AS x$a$; COMMIT; SELECT 2 AS y$a$;\n", POSTGRESQL);
        assertEquals(3, s.size(), s.toString());
        assertEquals("COMMIT", SqlStatements.transactionControl(s.get(1)));
        // The driver counts a digit as an identifier character too; after a quote or a space, a tag opens.
        assertEquals(
                3,
                SqlStatements.split("SELECT 1$a$; COMMIT; SELECT 2$a$", POSTGRESQL)
                        .size());
        assertEquals(
                3,
                SqlStatements.split("SELECT x$$; COMMIT; SELECT y$$", POSTGRESQL)
                        .size());
        assertEquals(
                3,
                SqlStatements.split("SELECT é$a$; COMMIT; SELECT ê$a$", POSTGRESQL)
                        .size());
        assertEquals(
                1, SqlStatements.split("SELECT 'x'$a$; COMMIT; $a$", POSTGRESQL).size());
        assertEquals(
                1, SqlStatements.split("SELECT $é$; COMMIT; $é$", POSTGRESQL).size());
        assertEquals(
                1,
                SqlStatements.split("DO $_1$ BEGIN NULL; END $_1$", POSTGRESQL).size());
    }

    /** PostgreSQL's E'…' takes backslash escapes, its comments nest, and a backtick is no quote there. */
    @Test
    void postgresqlEscapeStringsNestedCommentsAndBackticksAreReadAsPostgresqlReadsThem() {
        List<SqlStatements.Statement> e = SqlStatements.split("SELECT E'\\''; COMMIT; SELECT ''; -- '", POSTGRESQL);
        assertEquals(3, e.size(), e.toString());
        assertEquals("COMMIT", SqlStatements.transactionControl(e.get(1)));
        assertEquals(
                3,
                SqlStatements.split("SELECT e'\\'';COMMIT;SELECT ''-- '", POSTGRESQL)
                        .size());
        // A standard string: the backslash is a character, the quote after it closes the string.
        assertEquals(
                3,
                SqlStatements.split("SELECT 'a\\'; COMMIT; SELECT 'b'", POSTGRESQL)
                        .size());
        // "name'…'" is no E-string: the E ends a longer name.
        assertEquals(
                2, SqlStatements.split("SELECT typE'\\'; COMMIT", POSTGRESQL).size());
        List<SqlStatements.Statement> nested = SqlStatements.split("/* /* */ ' */ SELECT 1; COMMIT; -- '", POSTGRESQL);
        assertEquals(2, nested.size(), nested.toString());
        assertEquals("COMMIT", SqlStatements.transactionControl(nested.get(1)));
        assertEquals(
                3,
                SqlStatements.split("SELECT 1 `; COMMIT; SELECT `", POSTGRESQL).size());
    }

    /** MariaDB/MySQL: # comments, "--" only before a space, /*! … *&#47; runs, backslash escapes, no $ quotes. */
    @Test
    void mariadbCommentsAndEscapesAreReadAsMariadbReadsThem() {
        assertEquals("COMMIT", control("# a note\nCOMMIT", MARIADB));
        assertEquals("COMMIT", control("/*!COMMIT*/", MARIADB));
        assertEquals("START TRANSACTION", control("/*!50000 START TRANSACTION */", MARIADB));
        assertEquals("SET AUTOCOMMIT", control("/*M!100100 SET autocommit = 0 */", MARIADB));
        assertEquals(null, control("/*!COMMIT*/ SELECT 1", POSTGRESQL), "a comment elsewhere");
        assertEquals(
                1,
                SqlStatements.split("SELECT 'a\\'; COMMIT; SELECT 1'", MARIADB).size());
        assertEquals(
                1, SqlStatements.split("SELECT \"a\\\"; COMMIT; \"", MARIADB).size());
        assertEquals(
                3,
                SqlStatements.split("SELECT 1 AS $a$; COMMIT; SELECT $a$", MARIADB)
                        .size());
        assertEquals(2, SqlStatements.split("SELECT 1--1; COMMIT", MARIADB).size());
        assertEquals(1, SqlStatements.split("SELECT 1 -- 1; COMMIT", MARIADB).size());
        assertEquals(1, SqlStatements.split("SELECT 1 # ; COMMIT", MARIADB).size());
        assertEquals(1, SqlStatements.split("SELECT `a;b` FROM t", MARIADB).size());
    }

    /** SQLite: [brackets] quote a name, and there are no dollar quotes. */
    @Test
    void sqliteBracketsAreQuotes() {
        assertEquals(
                3,
                SqlStatements.split("SELECT 1 AS [x']; COMMIT; SELECT '1'", SQLITE)
                        .size());
        assertEquals(1, SqlStatements.split("SELECT 1 AS [x;y]", SQLITE).size());
        assertEquals(
                3, SqlStatements.split("SELECT $a$; COMMIT; SELECT $a$", SQLITE).size());
    }

    @Test
    void fencesOwnNamesAreFoundAsWholeWordsAnywhereInAStatement() {
        for (String sql : List.of(
                "UPDATE fence_tokens SET token = 0",
                "DELETE FROM app.\"Schema_Migrations\"",
                "CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $$DELETE FROM fence_tokens$$",
                "SELECT 1 -- RELEASE_LOCK('fence-migrate:db/migrations')",
                "SELECT x$release_all_locks")) {
            assertTrue(
                    SqlStatements.ownName(SqlStatements.split(sql, POSTGRESQL).get(0)) != null, sql);
        }
        for (String sql : List.of(
                "CREATE TABLE fence_tokens_archive (x INT)",
                "SELECT my_get_lock(1)",
                "INSERT INTO t VALUES ('fence tokens')")) {
            assertEquals(
                    null,
                    SqlStatements.ownName(SqlStatements.split(sql, MARIADB).get(0)),
                    sql);
        }
    }

    /**
     * PostgreSQL's Unicode-escaped names are static SQL, not dynamic: {@code U&"fence\005Ftokens"} is the
     * table fence_tokens to the server, and a migration that spelt it so rewrote the fence row unscreened.
     */
    @Test
    void unicodeEscapedNamesAreReadDecoded() {
        for (String sql : List.of(
                "UPDATE U&\"fence\\005Ftokens\" SET resource = 'db/sneaky'",
                "update u&\"schema\\005fmigrations\" set applied_holder = 'x'",
                "UPDATE U&\"fence!005Ftokens\" UESCAPE '!' SET token = 0",
                "UPDATE U&\"fence\\+00005Ftokens\" SET token = 0",
                "UPDATE U&\"\\0066\\0065\\006E\\0063\\0065_tokens\" SET token = 0",
                "SELECT U&'release\\005Flock'('fence-migrate:db')")) {
            assertEquals(
                    true,
                    SqlStatements.ownName(SqlStatements.split(sql, POSTGRESQL).get(0)) != null,
                    sql);
        }
        assertEquals(
                "standard_conforming_strings",
                SqlStatements.quotingSetting(
                        SqlStatements.split("SET U&\"standard\\005Fconforming\\005Fstrings\" = off", POSTGRESQL)
                                .get(0),
                        POSTGRESQL));
        for (String sql : List.of(
                "CREATE TABLE U&\"d\\0061t\\+000061\" (x INT)", "SELECT U&'fence tokens'", "SELECT U&\"fence\\005\"")) {
            assertEquals(
                    null,
                    SqlStatements.ownName(SqlStatements.split(sql, POSTGRESQL).get(0)),
                    sql);
        }
    }

    private static String control(String sql, DatabaseUrl.Kind kind) {
        return SqlStatements.transactionControl(SqlStatements.split(sql, kind).get(0));
    }

    /** A migration's file name goes into the ledger and FENCED messages: it must print as itself. */
    @Test
    void aMigrationFileNameThatDoesNotPrintAsItselfIsRefused(@org.junit.jupiter.api.io.TempDir Path dir)
            throws java.io.IOException {
        java.nio.file.Files.writeString(dir.resolve("0001_init.sql"), "CREATE TABLE t (a INT);\n");
        assertEquals(1, MigrationFile.scan(dir).size());
        java.nio.file.Files.writeString(
                dir.resolve("0002_add\n01:14:00  RELEASE db\u001b[8m.sql"), "CREATE TABLE u (a INT);\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> MigrationFile.scan(dir));
        assertTrue(e.getMessage().contains("control or invisible character"), e.getMessage());
        assertTrue(!e.getMessage().contains("\n") && !e.getMessage().contains("\u001b"), e.getMessage());
    }
}
