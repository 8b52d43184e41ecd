package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fence.core.InternalException;
import dev.fence.store.SqlScripts;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SqlResourcesTest {
    private static String resource(String name) throws IOException {
        try (InputStream in = SqlResources.class.getResourceAsStream(name)) {
            assertNotNull(in, name + " is on the class path");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void theCompiledSqlIsTheSqlFiles() throws IOException {
        // The build writes SqlText from the .sql files; a stale or garbled copy would run other SQL than the
        // files a reviewer reads.
        assertEquals(resource("schema.sql"), SqlText.SCHEMA);
        assertEquals(resource("statements.sql"), SqlText.STATEMENTS);
    }

    @Test
    void statementsAndSchemaParse() {
        SqlResources sql = SqlResources.load();
        assertFalse(sql.schema().isEmpty());
        for (String statement : sql.schema()) {
            assertFalse(statement.isBlank());
        }
    }

    @Test
    void theCompiledStatementsAreThoseTheFileNames() throws IOException {
        // The build compiles each statement of statements.sql into SqlText, reading the file as SqlScripts
        // does; a hook looks them up. Both readings must give the same statements, in the file's order, and no
        // name may be given twice.
        Map<String, String> all = SqlScripts.parseNamed(resource("statements.sql"));
        assertEquals(all.size(), SqlText.STATEMENT_NAMES.length);
        assertEquals(all.size(), SqlText.STATEMENT_SQL.length);
        SqlResources sql = SqlResources.load();
        for (Map.Entry<String, String> e : all.entrySet()) {
            assertEquals(e.getValue(), sql.get(e.getKey()), e.getKey());
        }
        assertThrows(InternalException.class, () -> sql.get("no.such.statement"));
    }
}
