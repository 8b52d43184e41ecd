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
    void eachStatementReadAloneIsTheOneTheWholeFileNames() {
        // The store reads a statement out of the text when first asked (a hook runs a few); that must be the
        // statement a reading of the whole file gives, and no name may be given twice.
        Map<String, String> all = SqlScripts.parseNamed(SqlText.STATEMENTS);
        assertFalse(all.isEmpty());
        SqlResources sql = SqlResources.load();
        for (Map.Entry<String, String> e : all.entrySet()) {
            assertEquals(e.getValue(), sql.get(e.getKey()), e.getKey());
            assertEquals(e.getValue(), sql.get(e.getKey()), e.getKey() + ", asked again");
        }
        assertThrows(InternalException.class, () -> sql.get("no.such.statement"));
    }
}
