package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A form body is bytes (read as ISO-8859-1, one char per byte), and its values are UTF-8 whether or not
 * the client escaped them. The curl shim's /dev/tcp transport escapes only {@code % & +}, so a ref or
 * pusher name with a non-ASCII letter arrives unescaped; read as Latin-1 it named another resource
 * ({@code refs/heads/cafÃ©}) than curl's escaped spelling of the same push, and than the lease.
 */
class FormUtf8Test {
    private static String body(String utf8) {
        return new String(utf8.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }

    @Test
    void anUnescapedUtf8ValueReadsAsTheSameTextAsItsEscapedSpelling() {
        Form raw = Form.parse(body("stdin=0 1 refs/heads/café\n&env=REMOTE_USER=josé"));
        Form escaped = Form.parse("stdin=0+1+refs%2Fheads%2Fcaf%C3%A9%0A&env=REMOTE_USER%3Djos%C3%A9");
        assertEquals("0 1 refs/heads/café\n", raw.get("stdin"));
        assertEquals(escaped.get("stdin"), raw.get("stdin"));
        assertEquals("REMOTE_USER=josé", raw.get("env"));
        assertEquals(escaped.get("env"), raw.get("env"));
    }

    @Test
    void anUnescapedValueThatIsNotUtf8IsRefusedAsAnEscapedOneIs() {
        String latin1 = "stdin=refs/heads/caf\u00e9";
        assertEquals(
                400, assertThrows(HttpError.class, () -> Form.parse(latin1)).status());
        assertEquals(
                400,
                assertThrows(HttpError.class, () -> Form.parse("stdin=refs/heads/caf%E9"))
                        .status());
    }

    @Test
    void aQueryIsCharactersAlready() {
        assertEquals(
                "git:app:refs/heads/café",
                Form.parseQuery("resource=git:app:refs/heads/café").get("resource"));
    }
}
