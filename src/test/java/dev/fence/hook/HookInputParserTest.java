package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeout;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.InvalidInputException;
import dev.fence.core.RefUpdate;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class HookInputParserTest {
    private static final String Z40 = "0".repeat(40);
    private static final String A40 = "a".repeat(40);
    private static final String B40 = "0123456789abcdef0123456789abcdef01234567";
    private static final String Z64 = "0".repeat(64);
    private static final String A64 = "ab".repeat(32);
    private static final String B64 = "0123456789abcdef".repeat(4);

    private static List<RefUpdate> parse(String input) {
        return new HookInputParser().parse(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)));
    }

    private static String failure(String input) {
        return assertThrows(InvalidInputException.class, () -> parse(input)).getMessage();
    }

    @Test
    void emptyInputIsNoUpdates() {
        assertEquals(List.of(), parse(""));
    }

    @Test
    void sha1UpdateCreateAndDeleteInOrder() {
        List<RefUpdate> updates = parse(A40 + " " + B40 + " refs/heads/main\n"
                + Z40 + " " + B40 + " refs/heads/feature/x\n"
                + A40 + " " + Z40 + " refs/tags/v1\n");
        assertEquals(
                List.of(
                        new RefUpdate(A40, B40, "refs/heads/main"),
                        new RefUpdate(Z40, B40, "refs/heads/feature/x"),
                        new RefUpdate(A40, Z40, "refs/tags/v1")),
                updates);
        assertEquals(RefUpdate.Kind.UPDATE, updates.get(0).kind());
        assertEquals(RefUpdate.Kind.CREATE, updates.get(1).kind());
        assertEquals(RefUpdate.Kind.DELETE, updates.get(2).kind());
    }

    @Test
    void sha256Ids() {
        List<RefUpdate> updates = parse(A64 + " " + B64 + " refs/heads/main\n" + Z64 + " " + B64 + " refs/heads/new\n");
        assertEquals(new RefUpdate(A64, B64, "refs/heads/main"), updates.get(0));
        assertEquals(RefUpdate.Kind.CREATE, updates.get(1).kind());
    }

    @Test
    void finalLineWithoutNewlineIsAccepted() {
        assertEquals(List.of(new RefUpdate(A40, B40, "refs/heads/main")), parse(A40 + " " + B40 + " refs/heads/main"));
    }

    @Test
    void nonAsciiRefNameIsAccepted() {
        assertEquals(
                "refs/heads/grün",
                parse(A40 + " " + B40 + " refs/heads/grün\n").get(0).ref());
    }

    @Test
    void mixedIdLengthsAreRejected() {
        String m = failure(A40 + " " + B40 + " refs/heads/a\n" + A40 + " " + B64 + " refs/heads/b\n");
        assertTrue(m.startsWith("hook input line 2: "), m);
        assertTrue(m.contains("40") && m.contains("64"), m);
    }

    @Test
    void upperCaseHexIsRejected() {
        String m = failure(A40.toUpperCase() + " " + B40 + " refs/heads/main\n");
        assertTrue(m.contains("line 1") && m.contains("old id") && m.contains("lower-case hex"), m);
    }

    @Test
    void shortAndNonHexIdsAreRejected() {
        assertTrue(failure("abc " + B40 + " refs/heads/main\n").contains("3 characters long"));
        assertTrue(failure(A40 + " " + "g".repeat(40) + " refs/heads/main\n").contains("new id"));
    }

    @Test
    void missingFieldsAreRejected() {
        assertTrue(failure(A40 + " " + B40 + "\n").contains("expected '<old-id> <new-id> <ref>'"));
        assertTrue(failure("garbage\n").contains("line 1"));
    }

    @Test
    void extraSpacesAreRejected() {
        assertTrue(failure(A40 + "  " + B40 + " refs/heads/main\n").contains("new id"));
        assertTrue(failure(A40 + " " + B40 + " refs/heads/main extra\n").contains("line 1"));
    }

    @Test
    void emptyLineIsRejectedWithItsNumber() {
        String m = failure(A40 + " " + B40 + " refs/heads/a\n\n" + A40 + " " + B40 + " refs/heads/b\n");
        assertTrue(m.startsWith("hook input line 2: is empty"), m);
    }

    @Test
    void bothIdsZeroIsRejected() {
        assertTrue(failure(Z40 + " " + Z40 + " refs/heads/main\n").contains("both zero"));
    }

    @Test
    void controlCharactersInRefAreEscapedNeverRaw() {
        String m = failure(A40 + " " + B40 + " refs/heads/ok\n" + A40 + " " + B40 + " refs/heads/a\u0007b\u001b[31m\n");
        assertTrue(m.startsWith("hook input line 2: "), m);
        assertTrue(m.contains("refs/heads/a\\x07b\\x1B[31m"), m);
        assertTrue(m.contains("U+0007"), m);
        assertNoControlCharacters(m);
    }

    @Test
    void c1ControlsAndLineSeparatorsInRefAreRejected() {
        assertNoControlCharacters(failure(A40 + " " + B40 + " refs/heads/a\u009bb\n"));
        String m = failure(A40 + " " + B40 + " refs/heads/a\u2028b\n");
        assertTrue(m.contains("\\u{2028}"), m);
        assertNoControlCharacters(m);
    }

    @Test
    void carriageReturnIsRejected() {
        String m = failure(A40 + " " + B40 + " refs/heads/main\r\n");
        assertTrue(m.contains("\\x0D"), m);
        assertNoControlCharacters(m);
    }

    @Test
    void forbiddenRefNamesAreRejected() {
        assertTrue(failure(A40 + " " + B40 + " refs/heads/a b\n").contains("line 1"));
        assertTrue(failure(A40 + " " + B40 + " refs/heads/a..b\n").contains("not a valid full ref name"));
        assertTrue(failure(A40 + " " + B40 + " main\n").contains("not a valid full ref name"));
        assertTrue(failure(A40 + " " + B40 + " refs/heads/x~1\n").contains("'~'"));
    }

    @Test
    void invalidUtf8IsRejected() {
        byte[] line = (A40 + " " + B40 + " refs/heads/\u00ff\n").getBytes(StandardCharsets.ISO_8859_1);
        var e = assertThrows(
                InvalidInputException.class, () -> new HookInputParser().parse(new ByteArrayInputStream(line)));
        assertTrue(e.getMessage().contains("not valid UTF-8"), e.getMessage());
    }

    @Test
    void duplicateRefIsRejected() {
        String m = failure(A40 + " " + B40 + " refs/heads/main\n" + B40 + " " + A40 + " refs/heads/main\n");
        assertTrue(m.contains("line 2") && m.contains("already updated on line 1"), m);
    }

    @Test
    void lineLengthLimit() {
        String ok = A40 + " " + B40 + " refs/heads/" + "x".repeat(30);
        assertEquals(
                1, new HookInputParser(ok.length(), 10).parse(stream(ok + "\n")).size());
        var e = assertThrows(
                InvalidInputException.class, () -> new HookInputParser(ok.length() - 1, 10).parse(stream(ok + "\n")));
        assertTrue(e.getMessage().contains("longer than " + (ok.length() - 1) + " bytes"), e.getMessage());
        String huge = A40 + " " + B40 + " refs/heads/" + "y".repeat(10_000) + "\n";
        assertTrue(failure(huge).contains("longer than 4096 bytes"));
    }

    @Test
    void aLineLongerThanTheFirstBufferAndExactlyAtTheLimitIsReadWholeAmongShortOnes() {
        String longRef = "refs/heads/" + "z".repeat(1000);
        String longLine = A40 + " " + B40 + " " + longRef;
        String input = A40 + " " + B40 + " refs/heads/a\n" + longLine + "\n" + A40 + " " + B40 + " refs/heads/b";
        var updates = new HookInputParser(longLine.length(), 10).parse(stream(input));
        assertEquals(
                List.of("refs/heads/a", longRef, "refs/heads/b"),
                updates.stream().map(RefUpdate::ref).toList());
        var e = assertThrows(
                InvalidInputException.class, () -> new HookInputParser(longLine.length() - 1, 10).parse(stream(input)));
        assertTrue(e.getMessage().contains("line 2 is longer than"), e.getMessage());
    }

    @Test
    void lineCountLimit() {
        String three = (A40 + " " + B40 + " refs/heads/a\n")
                + (A40 + " " + B40 + " refs/heads/b\n")
                + (A40 + " " + B40 + " refs/heads/c\n");
        assertEquals(3, new HookInputParser(4096, 3).parse(stream(three)).size());
        var e = assertThrows(InvalidInputException.class, () -> new HookInputParser(4096, 2).parse(stream(three)));
        assertEquals("hook input has more than 2 lines", e.getMessage());
    }

    @Test
    void tenThousandLinesParseQuickly() {
        StringBuilder in = new StringBuilder();
        for (int i = 0; i < 10_000; i++) {
            in.append(A40)
                    .append(' ')
                    .append(B40)
                    .append(" refs/heads/agent/")
                    .append(i)
                    .append('\n');
        }
        List<RefUpdate> updates = assertTimeout(Duration.ofSeconds(5), () -> parse(in.toString()));
        assertEquals(10_000, updates.size());
        assertEquals("refs/heads/agent/9999", updates.get(9_999).ref());
    }

    private static ByteArrayInputStream stream(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    static void assertNoControlCharacters(String message) {
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            assertFalse(
                    Character.isISOControl(c) || c == '\u2028' || c == '\u2029',
                    "raw control character U+" + Integer.toHexString(c) + " in: " + message);
        }
    }
}
