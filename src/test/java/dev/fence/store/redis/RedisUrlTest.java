package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RedisUrlTest {

    @Test
    void parsesEveryPart() {
        assertEquals(
                new RedisUrl(false, "redis.internal", 6380, "fence", "p@ss:w+rd", 3),
                RedisUrl.parse("redis://fence:p%40ss%3Aw+rd@redis.internal:6380/3"));
        assertEquals(
                new RedisUrl(true, "cache.example", 6379, null, null, 0), RedisUrl.parse("rediss://cache.example"));
        assertEquals(new RedisUrl(false, "::1", 7000, null, "pw", 0), RedisUrl.parse("redis://:pw@[::1]:7000/"));
        assertEquals(new RedisUrl(false, "h", 1, null, "pw", 0), RedisUrl.parse("redis://pw@h:1"));
        assertEquals(new RedisUrl(false, "h", 1, null, null, 0), RedisUrl.parse("redis://h:1?timeout=2s"));
    }

    @Test
    void describeMasksThePassword() {
        assertEquals(
                "redis://fence:***@redis.internal:6380/3",
                RedisUrl.parse("redis://fence:secret@redis.internal:6380/3").describe());
        assertEquals(
                "rediss://:***@[::1]:7000",
                RedisUrl.parse("rediss://:secret@[::1]:7000").describe());
        assertEquals("redis://h:6379", RedisUrl.parse("redis://h").describe());
        assertEquals("redis://fence@h:6379", RedisUrl.parse("redis://fence:@h").describe());
        assertFalse(RedisUrl.parse("redis://u:secret@h").toString().contains("secret"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "http://u:secret@h:1",
                "redis://u:sec ret@h:1",
                "redis://u:secret@h:1/db",
                "redis://u:secret@h:1/-1",
                "redis://u:sec@ret@h:1",
                "redis:///0",
                "u:secret@h:1"
            })
    void rejectsMalformedUrlsWithoutShowingThePassword(String url) {
        ConfigException e = assertThrows(ConfigException.class, () -> RedisUrl.parse(url));
        assertFalse(e.getMessage().contains("secret"), e.getMessage());
        assertFalse(e.getMessage().contains("sec"), e.getMessage());
        assertTrue(e.getMessage().startsWith("store URL"), e.getMessage());
    }

    @Test
    void maskKeepsSchemeAndHost() {
        assertEquals("redis://***@h:1", RedisUrl.mask("redis://u:p@h:1"));
        assertEquals("redis://h:1", RedisUrl.mask("redis://h:1"));
        assertEquals("***@h", RedisUrl.mask("u:p@h"));
    }
}
