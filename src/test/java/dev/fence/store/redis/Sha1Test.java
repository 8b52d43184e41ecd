package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Sha1Test {
    @Test
    void isTheJdksSha1ForEveryLengthAroundTheBlockBoundaries() throws Exception {
        Random random = new Random(11);
        for (int length = 0; length <= 300; length++) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < length; i++) {
                text.append((char) ('a' + random.nextInt(26)));
            }
            String expected = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1")
                            .digest(text.toString().getBytes(StandardCharsets.UTF_8)));
            assertEquals(expected, Sha1.hex(text.toString()), length + " characters");
        }
    }

    @Test
    void namesEveryScriptAsRedisDoes() {
        // redis-cli SCRIPT LOAD "return 1" answers this id.
        assertEquals("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", Sha1.hex("return 1"));
    }
}
