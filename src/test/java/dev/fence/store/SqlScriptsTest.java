package dev.fence.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fence.core.InternalException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SqlScriptsTest {
    private static final String TEXT = "-- the store's statements\n"
            + "\n"
            + "-- name: first\n"
            + "SELECT 1\n"
            + "  -- a comment inside\n"
            + "\n"
            + "  FROM t; -- name: not a mark\n"
            + "   -- name:  second  \n"
            + "UPDATE t\n"
            + "SET a = '-- name: x'\n"
            + "-- name: last\n"
            + "DELETE FROM t";

    @Test
    void namedStatementsDropCommentsAndBlankLines() {
        assertEquals(
                Map.of(
                        "first", "SELECT 1\n  FROM t; -- name: not a mark",
                        "second", "UPDATE t\nSET a = '-- name: x'",
                        "last", "DELETE FROM t"),
                SqlScripts.parseNamed(TEXT));
    }

    @Test
    void aNameGivenTwiceIsRefused() {
        assertThrows(
                InternalException.class, () -> SqlScripts.parseNamed("-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n"));
    }

    @Test
    void aScriptSplitsAtSemicolonsThatEndALine() {
        assertEquals(
                List.of("CREATE TABLE t (a TEXT DEFAULT ';x');", "PRAGMA user_version = 2;"),
                SqlScripts.splitScript(
                        "-- schema\nCREATE TABLE t (a TEXT DEFAULT ';x');\n\nPRAGMA user_version = 2;\n"));
        assertThrows(InternalException.class, () -> SqlScripts.splitScript("CREATE TABLE t (a TEXT)\n"));
    }
}
