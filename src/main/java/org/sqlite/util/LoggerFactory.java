package org.sqlite.util;

import java.util.function.Supplier;

/**
 * fence's replacement for sqlite-jdbc's class of this name (same package, same public API; the shaded jar
 * leaves the driver's own copy out). The driver's class sends its messages to SLF4J when SLF4J is on the
 * class path, and fence's SLF4J binding is the no-operation one, so in fence every driver message was
 * already dropped: this class drops them without starting SLF4J, and without building them (the
 * suppliers are never called).
 *
 * <p>Why: the driver asks for its loggers while it loads its native library, so every SQLite hook
 * started SLF4J, whose start with an explicitly named binding formats a message with {@code
 * String.format}; on JDK 17 that compiles {@code java.util.Formatter}'s regular expression and links
 * eight lambdas, several milliseconds of a process that lives about a hundred. {@code
 * SqliteDriverPatchTest} checks its API against the driver's class, that the driver's class would publish
 * what this one drops, and that the driver works and logs nothing through it; it fails the build on
 * another driver version than {@link org.sqlite.core.DirectAccess#PATCHED_FOR}.
 *
 * <p>Thread-safe (stateless).
 */
public class LoggerFactory {
    /** Whether the driver's class would use SLF4J: never here, messages go nowhere. */
    static final boolean USE_SLF4J = false;

    private static final Logger QUIET = new Quiet();

    public LoggerFactory() {}

    /** A logger that drops every message unbuilt. */
    public static Logger getLogger(Class<?> hostClass) {
        return QUIET;
    }

    private static final class Quiet implements Logger {
        @Override
        public void trace(Supplier<String> message) {}

        @Override
        public void info(Supplier<String> message) {}

        @Override
        public void warn(Supplier<String> message) {}

        @Override
        public void error(Supplier<String> message, Throwable t) {}
    }
}
