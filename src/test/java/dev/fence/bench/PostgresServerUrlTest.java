package dev.fence.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fence.core.InvalidInputException;
import org.junit.jupiter.api.Test;

class PostgresServerUrlTest {
    @Test
    void aServerUrlKeepsItsPartsAndNamesNoPasswordInMessages() {
        PostgresServerUrl u = PostgresServerUrl.parse("postgresql://bench:s3cr%40t@db.local:5433");
        assertEquals("bench", u.user());
        assertEquals("s3cr@t", u.password());
        assertEquals(5433, u.port());
        assertEquals("postgres", u.database());
        assertEquals("bench@db.local:5433", u.describe());
        assertEquals("jdbc:postgresql://db.local:5433/fence_scale_x", u.jdbc("fence_scale_x"));
        assertEquals("postgresql://bench:s3cr%40t@db.local:5433/fence_scale_x", u.storeUrl("fence_scale_x"));
        PostgresServerUrl plain = PostgresServerUrl.parse("postgres://postgres@127.0.0.1/admin");
        assertEquals(5432, plain.port());
        assertEquals("admin", plain.database());
        assertEquals("postgresql://postgres@127.0.0.1:5432/x", plain.storeUrl("x"));
    }

    @Test
    void anythingElseIsAUsageErrorThatDoesNotEchoTheUrl() {
        for (String bad : new String[] {"redis://127.0.0.1", "postgresql://127.0.0.1/x", "postgresql://u:pw@", "::"}) {
            var e = assertThrows(InvalidInputException.class, () -> PostgresServerUrl.parse(bad), bad);
            assertFalse(e.getMessage().contains("pw"), e.getMessage());
        }
    }
}
