package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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
}
