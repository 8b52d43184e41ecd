package dev.fence.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.ConfigException;
import java.util.List;
import org.junit.jupiter.api.Test;

class PostgresUrlTest {
    @Test
    void parsesUserPasswordHostPortAndDatabase() {
        PostgresUrl u = PostgresUrl.parse("postgresql://fence:p%40ss%2Fw+rd@db.example:6432/fence_store");

        assertEquals("fence", u.user());
        assertEquals("p@ss/w+rd", u.password());
        assertEquals(List.of(new PostgresUrl.Host("db.example", 6432)), u.hosts());
        assertEquals("fence_store", u.database());
        assertEquals("jdbc:postgresql://db.example:6432/fence_store", u.jdbcUrl());
        assertEquals("postgresql://fence:***@db.example:6432/fence_store", u.describe());
        assertEquals(u.describe(), u.toString());
    }

    @Test
    void postgresSchemeDefaultPortAndNoPassword() {
        PostgresUrl u = PostgresUrl.parse("postgres://agent@localhost/fence?timeout=1s");

        assertNull(u.password());
        assertEquals(List.of(new PostgresUrl.Host("localhost", 5432)), u.hosts());
        assertEquals("postgresql://agent@localhost:5432/fence", u.describe());
    }

    @Test
    void severalHostsAndIpv6() {
        PostgresUrl u = PostgresUrl.parse("postgresql://fence@10.0.0.1:5432,[::1]:5433,pg3/f%20s");

        assertEquals(
                List.of(
                        new PostgresUrl.Host("10.0.0.1", 5432),
                        new PostgresUrl.Host("::1", 5433),
                        new PostgresUrl.Host("pg3", 5432)),
                u.hosts());
        assertEquals("f s", u.database());
        assertEquals("jdbc:postgresql://10.0.0.1:5432,[::1]:5433,pg3:5432/f%20s", u.jdbcUrl());
        assertEquals("postgresql://fence@10.0.0.1:5432,[::1]:5433,pg3:5432/f%20s", u.describe());
    }

    @Test
    void malformedUrlsAreConfigErrorsThatNeverShowThePassword() {
        for (String bad : List.of(
                "mysql://u:secret@h/db",
                "postgresql://h:5432/db",
                "postgresql://:secret@h/db",
                "postgresql://u:secret@h:5432",
                "postgresql://u:secret@h:5432/",
                "postgresql://u:secret@h:99999/db",
                "postgresql://u:secret@h:x/db",
                "postgresql://u:secret@/db",
                "postgresql://u:secret@h,/db",
                "postgresql://u:secret@[::1/db",
                "postgresql://u:secret@h/a/b",
                "postgresql://u:sec%zzret@h/db")) {
            ConfigException e = assertThrows(ConfigException.class, () -> PostgresUrl.parse(bad), bad);
            assertFalse(e.getMessage().contains("secret"), e::getMessage);
            assertTrue(e.getMessage().contains("store URL"), e::getMessage);
        }
    }
}
