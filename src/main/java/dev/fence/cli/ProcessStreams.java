package dev.fence.cli;

import java.io.FilterInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * The streams {@link Main#main} makes from the real process's stdin, stdout and stderr, marked as such:
 * a command that starts a child ({@code fence exec}) hands these to the child as they are (byte for
 * byte, a terminal stays a terminal) and pumps any other stream a {@link Context} carries.
 */
final class ProcessStreams {
    private ProcessStreams() {}

    /** The process's stdin. */
    static final class In extends FilterInputStream {
        In(InputStream in) {
            super(in);
        }
    }

    /** The process's stdout or stderr, as UTF-8 text with auto-flush. */
    static final class Out extends PrintWriter {
        private final BooleanSupplier terminal;
        private Boolean known;

        Out(OutputStream out) {
            this(out, null);
        }

        /**
         * @param terminal whether the process has a console (progress displays only then), asked on first
         *     need: finding the console costs a fresh JVM milliseconds (on JDK 22+ a service lookup across
         *     modules), which a hook, which never asks, should not pay; null for never
         */
        Out(OutputStream out, BooleanSupplier terminal) {
            super(new OutputStreamWriter(out, StandardCharsets.UTF_8), true);
            this.terminal = terminal;
        }

        synchronized boolean terminal() {
            if (known == null) {
                known = terminal != null && terminal.getAsBoolean();
            }
            return known;
        }
    }

    static boolean isProcess(InputStream in) {
        return in instanceof In;
    }

    static boolean isProcess(PrintWriter w) {
        return w instanceof Out;
    }

    /** True for the process's own stream when the process runs on a terminal. */
    static boolean isTerminal(PrintWriter w) {
        return w instanceof Out o && o.terminal();
    }
}
