package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ref names as a file system that ignores case (and, on macOS, Unicode normalisation) compares them. */
class RefFoldingTest {
    @Test
    void caseFoldsAwayAndNothingElseDoesInAsciiNames() {
        assertEquals("refs/heads/main", RefFolding.fold("refs/HEADS/Main"));
        String lower = "refs/heads/main";
        assertSame(lower, RefFolding.fold(lower), "an all-lower-case ASCII name is its own fold, not a copy");
        assertNotEquals(RefFolding.fold("refs/heads/main"), RefFolding.fold("refs/heads/main2"));
        assertNotEquals(RefFolding.fold("refs/heads/a-b"), RefFolding.fold("refs/heads/a_b"));
    }

    @Test
    void composedAndDecomposedSpellingsAndTheirCasesFoldAlike() {
        String nfc = "refs/heads/caf\u00e9";
        String nfd = "refs/heads/cafe\u0301";
        String upper = "refs/heads/CAF\u00c9";
        String upperNfd = "refs/heads/CAFE\u0301";
        for (String s : List.of(nfd, upper, upperNfd)) {
            assertEquals(RefFolding.fold(nfc), RefFolding.fold(s), s);
        }
        assertEquals(nfc, RefFolding.fold(nfd), "the fold is composed");
        assertNotEquals(RefFolding.fold(nfc), RefFolding.fold("refs/heads/cafe"));
    }

    @Test
    void lettersWhoseUpperCaseIsAsciiFoldToIt() {
        assertEquals("refs/heads/key", RefFolding.fold("refs/heads/\u212aey")); // the Kelvin sign
        assertEquals("refs/heads/sun", RefFolding.fold("refs/heads/\u017fun")); // the long s
        assertEquals(RefFolding.fold("refs/heads/\u03c3"), RefFolding.fold("refs/heads/\u03c2")); // final sigma
    }

    @Test
    void codePointsHfsPassesOverFoldAway() {
        for (char c :
                new char[] {'\u200c', '\u200d', '\u200e', '\u200f', '\u202a', '\u202e', '\u206a', '\u206f', '\ufeff'}) {
            String name = "refs/heads/ma" + c + "in";
            assertEquals("refs/heads/main", RefFolding.fold(name), Integer.toHexString(c));
        }
        assertEquals("refs/heads/main", RefFolding.fold("refs/\ufeffHEADS/MAIN"));
        // Other invisible characters are characters of the name to HFS+ (U+200B, U+2060).
        assertNotEquals("refs/heads/main", RefFolding.fold("refs/heads/ma\u200bin"));
        assertNotEquals("refs/heads/main", RefFolding.fold("refs/heads/ma\u2060in"));
    }

    @Test
    void dotsThatEndAComponentFoldAway() {
        assertEquals("refs/heads/main", RefFolding.fold("refs/heads./main"));
        assertEquals("refs/heads/a/b", RefFolding.fold("refs/HEADS./A./b"));
        assertEquals("refs/heads/caf\u00e9/x", RefFolding.fold("refs/heads/cafe\u0301./x"));
        assertEquals("refs/heads/v1.0/x", RefFolding.fold("refs/heads/v1.0/x"), "a dot inside a component stays");
        assertEquals("refs/.../x", RefFolding.fold("refs/.../x"), "a component of dots only stays");
    }

    @Test
    void aPolicyMatchesFoldedNamesAgainstFoldedPatterns() {
        FencePolicy p = new FencePolicy(
                List.of("refs/heads/main", "refs/heads/Release/*"),
                List.of(),
                PusherPolicy.BUMP,
                List.of(),
                true,
                Duration.ofSeconds(2));
        assertFalse(p.isFenced("refs/heads/MAIN"));
        assertTrue(p.isFencedIgnoringCase("refs/heads/MAIN"));
        assertTrue(p.isFencedIgnoringCase("refs/HEADS/main"));
        assertTrue(p.isFencedIgnoringCase("refs/heads./ma\u200din"));
        assertTrue(p.isFencedIgnoringCase("refs/heads/release/1.0"));
        assertFalse(p.isFencedIgnoringCase("refs/heads/release/1.0/notes"));
        assertFalse(p.isFencedIgnoringCase("refs/heads/topic"));
    }
}
