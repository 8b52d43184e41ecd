package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ResourcesTest {
    @Test
    void repoAndRefMapToOneNameAndBack() {
        String r = Resources.forRef("acme/widgets", "main");
        assertEquals("git:acme/widgets:refs/heads/main", r);
        assertEquals(
                new Resources.GitRef("acme/widgets", "refs/heads/main"),
                Resources.parse(r).orElseThrow());
        assertEquals(r, Resources.forRef("acme/widgets", "refs/heads/main"), "short and full names agree");
        assertEquals(
                "a:b",
                Resources.parse(Resources.forRef("a:b", "refs/heads/x"))
                        .orElseThrow()
                        .repoId());
        assertTrue(Resources.parse("db/migrations").isEmpty());
    }

    @Test
    void badNamesAreRefusedWithAReason() {
        assertThrows(InvalidInputException.class, () -> Resources.forRef("", "main"));
        assertThrows(InvalidInputException.class, () -> Resources.forRef("r", "ma\u0007in"));
        assertThrows(InvalidInputException.class, () -> Resources.forRef("r", "a..b"));
        assertThrows(InvalidInputException.class, () -> Names.require("resource", "x".repeat(513)));
        assertThrows(InvalidInputException.class, () -> Names.require("resource", "tab\there"));
        assertThrows(InvalidInputException.class, () -> Names.require("resource", "d\ud800"));
        assertThrows(InvalidInputException.class, () -> Names.require("holder", "\udbffx"));
        assertThrows(InvalidInputException.class, () -> Names.require("holder", "x\udc00y"));
        assertEquals("d\ud83d\ude00", Names.require("resource", "d\ud83d\ude00"), "a pair is one character");
        assertThrows(InvalidInputException.class, () -> Durations.parsePositive("--ttl", "-1"));
        assertThrows(InvalidInputException.class, () -> Durations.parsePositive("--ttl", "0"));
        assertThrows(InvalidInputException.class, () -> Durations.parsePositive("--ttl", "0s"));
        assertEquals(45_000, Durations.parsePositive("--ttl", "45s").toMillis());
        assertEquals(300_000, Durations.parsePositive("--ttl", "5m").toMillis());
    }
}
