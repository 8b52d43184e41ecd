package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class GlobsTest {
    @Test
    void singleStarStaysInASegmentDoubleStarCrossesThem() {
        assertTrue(Globs.matches("refs/heads/**", "refs/heads/main"));
        assertTrue(Globs.matches("refs/heads/**", "refs/heads/feat/billing-schema"));
        assertFalse(Globs.matches("refs/heads/**", "refs/tags/v1"));
        assertTrue(Globs.matches("refs/heads/*", "refs/heads/main"));
        assertFalse(Globs.matches("refs/heads/*", "refs/heads/feat/x"));
        assertTrue(Globs.matches("bot-*", "bot-7"));
        assertFalse(Globs.matches("bot-*", "robot-7"));
        assertTrue(Globs.matches("refs/heads/release-?", "refs/heads/release-1"));
    }

    @Test
    void aQuestionMarkIsOneCharacterEvenBeyondTheBasicPlane() {
        assertTrue(Globs.matches("refs/heads/r?", "refs/heads/r\ud83d\ude00"));
        assertFalse(Globs.matches("refs/heads/r??", "refs/heads/r\ud83d\ude00"));
        assertTrue(Globs.matches("refs/heads/r?x", "refs/heads/r\ud83d\ude00x"));
        assertTrue(Globs.matches("refs/heads/*?", "refs/heads/a\ud83d\ude00"));
        assertFalse(Globs.matches("refs/heads/r?", "refs/heads/r/"));
    }
}
