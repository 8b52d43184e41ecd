package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.InvalidInputException;
import dev.fence.core.PushOptions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PushOptionsReaderTest {
    private static final String PROOF = "fp2.gen-1.YWdlbnQtYQ." + "A".repeat(43);

    private static Map<String, String> options(String... options) {
        Map<String, String> env = new HashMap<>();
        env.put("GIT_PUSH_OPTION_COUNT", Integer.toString(options.length));
        for (int i = 0; i < options.length; i++) {
            env.put("GIT_PUSH_OPTION_" + i, options[i]);
        }
        return env;
    }

    private static String failure(Map<String, String> env) {
        return assertThrows(InvalidInputException.class, () -> PushOptionsReader.read(env))
                .getMessage();
    }

    @Test
    void unsetCountMeansNoOptions() {
        PushOptions o = PushOptionsReader.read(Map.of("GIT_PUSH_OPTION_0", "fence=5"));
        assertEquals(OptionalLong.empty(), o.token());
        assertNull(o.proof());
        assertEquals(List.of(), o.all());
    }

    @Test
    void zeroCountMeansNoOptions() {
        assertEquals(PushOptions.none(), PushOptionsReader.read(options()));
    }

    @Test
    void tokenAndProof() {
        PushOptions o = PushOptionsReader.read(options("fence=42", "fence-proof=" + PROOF));
        assertEquals(OptionalLong.of(42), o.token());
        assertEquals(PROOF, o.proof());
        assertEquals(List.of("fence=42", "fence-proof=" + PROOF), o.all());
    }

    @Test
    void largestTokenIsAccepted() {
        assertEquals(
                OptionalLong.of(Long.MAX_VALUE),
                PushOptionsReader.read(options("fence=" + Long.MAX_VALUE)).token());
    }

    @Test
    void tokenWithoutProofIsLeftToTheAdmissionRule() {
        PushOptions o = PushOptionsReader.read(options("fence=7"));
        assertEquals(OptionalLong.of(7), o.token());
        assertNull(o.proof());
    }

    @Test
    void unknownOptionsAreIgnored() {
        PushOptions o = PushOptionsReader.read(
                options("ci.skip", "merge_request.create", "fence=3", "fencing=x", "Fence=abc", "fence.x=1"));
        assertEquals(OptionalLong.of(3), o.token());
        assertEquals(6, o.all().size());
    }

    @Test
    void gitlabCiSkipAloneIsNoToken() {
        assertEquals(
                OptionalLong.empty(), PushOptionsReader.read(options("ci.skip")).token());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "fence=abc",
                "fence=-1",
                "fence=0",
                "fence=+5",
                "fence= 5",
                "fence=5 ",
                "fence=99999999999999999999",
                "fence=9223372036854775808",
                "fence=",
                "fence",
                "fence=007",
                "fence=1e3",
                "fence=٣"
            })
    void malformedTokensNameTheOption(String option) {
        String m = failure(options(option));
        assertTrue(m.startsWith("push option fence"), m);
        assertTrue(m.contains("not a positive whole number"), m);
    }

    @Test
    void messageQuotesTheBadValue() {
        assertEquals(
                "push option fence=abc: not a positive whole number (only the digits 0-9, no sign or spaces)",
                failure(options("fence=abc")));
        assertTrue(failure(options("fence=99999999999999999999")).contains("larger than 9223372036854775807"));
    }

    @Test
    void twoTokensAreRejected() {
        String m = failure(options("fence=5", "fence=6"));
        assertTrue(m.contains("given twice") && m.contains("fence=5") && m.contains("fence=6"), m);
        assertTrue(failure(options("fence=5", "fence=5")).contains("given twice"));
    }

    @Test
    void twoProofsAreRejectedWithoutEchoingThem() {
        String m = failure(options("fence=5", "fence-proof=" + PROOF, "fence-proof=" + PROOF));
        assertTrue(m.contains("fence-proof given twice"), m);
        assertFalse(m.contains(PROOF), m);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "fence-proof=hunter2-secret-value",
                "fence-proof=",
                "fence-proof",
                "fence-proof=fp1.gen.tooShortMacSecret",
                "fence-proof=fp1.gen.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\u0007"
            })
    void malformedProofIsRejectedWithoutEchoingIt(String option) {
        String m = failure(options("fence=5", option));
        assertTrue(m.startsWith("push option fence-proof: not a well-formed proof"), m);
        // The format proofs have now (Proofs), not the first one, which is void.
        assertTrue(m.contains("(expected fp2.<generation>.<holder>.<mac>;"), m);
        String value = option.length() > "fence-proof=".length() ? option.substring("fence-proof=".length()) : "";
        if (!value.isEmpty()) {
            assertFalse(m.contains(value), m);
        }
        assertFalse(m.contains("hunter2"), m);
        assertFalse(m.contains("Secret"), m);
    }

    @Test
    void proofWithoutTokenIsRejected() {
        String m = failure(options("fence-proof=" + PROOF));
        assertTrue(m.contains("fence-proof given without fence=<token>"), m);
        assertFalse(m.contains(PROOF), m);
    }

    @Test
    void proofBeforeTokenIsFine() {
        assertEquals(
                OptionalLong.of(9),
                PushOptionsReader.read(options("fence-proof=" + PROOF, "fence=9"))
                        .token());
    }

    @Test
    void missingNumberedOptionIsRejected() {
        Map<String, String> env = options("ci.skip", "fence=5");
        env.remove("GIT_PUSH_OPTION_1");
        String m = failure(env);
        assertTrue(m.contains("GIT_PUSH_OPTION_1 is not set"), m);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-1", "abc", "1.0", " 1", "+1", "99999999999", "10001"})
    void badCountIsRejected(String count) {
        String m = failure(Map.of("GIT_PUSH_OPTION_COUNT", count));
        assertTrue(m.startsWith("GIT_PUSH_OPTION_COUNT"), m);
    }

    @Test
    void controlCharactersInTokenValueAreEscaped() {
        String m = failure(options("fence=1\u001b[2J"));
        assertTrue(m.contains("\\x1B"), m);
        HookInputParserTest.assertNoControlCharacters(m);
    }

    @Test
    void toStringHidesTheProof() {
        assertFalse(PushOptionsReader.read(options("fence=1", "fence-proof=" + PROOF))
                .toString()
                .contains(PROOF));
    }
}
