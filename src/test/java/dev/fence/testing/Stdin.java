package dev.fence.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Feeds a child process its standard input the way git feeds a hook. */
public final class Stdin {
    private Stdin() {}

    /**
     * Writes {@code text} to the process's standard input and closes it. A process may exit before reading
     * its input (a hook that refuses on its settings alone does): git ignores the broken pipe then, and so
     * does this, so such a test asserts on the exit code and output rather than failing on a race.
     */
    public static void feed(Process p, String text) {
        try (OutputStream in = p.getOutputStream()) {
            in.write(text.getBytes(StandardCharsets.UTF_8));
        } catch (IOException brokenPipe) {
            // the process closed its end first; what it printed and its exit code say what happened
        }
    }
}
