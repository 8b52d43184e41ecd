package dev.fence.cli;

import dev.fence.core.ConfigException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.StoreUnavailableException;

/** Maps failures to exit codes: the one place that does. */
final class Failures {
    private Failures() {}

    static ExitCode exitCodeOf(Throwable t) {
        if (t instanceof InvalidInputException) {
            return ExitCode.USAGE;
        } else if (t instanceof ConfigException) {
            return ExitCode.CONFIG;
        } else if (t instanceof StoreUnavailableException) {
            return ExitCode.STORE_UNAVAILABLE;
        }
        return ExitCode.INTERNAL;
    }

    /** A message for the operator: the exception's own for fence failures, a bug report line otherwise. */
    static String messageOf(Throwable t) {
        if (t instanceof dev.fence.core.FenceException && !(t instanceof dev.fence.core.InternalException)) {
            return t.getMessage();
        }
        return "internal error: " + t + " (rerun with --verbose for the stack trace and report it)";
    }
}
