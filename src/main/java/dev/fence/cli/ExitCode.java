package dev.fence.cli;

/**
 * Every exit code fence returns, in one place. Scripts depend on these numbers: never renumber.
 *
 * <p>For the pre-receive hook, git treats any non-zero code as "reject every ref"; whether the hook
 * fails open or closed when the store is down is a configuration choice, never a side effect of these.
 */
enum ExitCode {
    OK(0, "Success (for the hook: the push is accepted)."),
    REJECTED(
            1,
            "Rejected: the hook, the remote or the pre-push guard refused the push, or the database refused a"
                    + " migration's SQL (reason on stderr)."),
    USAGE(2, "Usage error: a bad option, argument or input."),
    FENCED(3, "FENCED: the lease or token is superseded; re-read the resource and re-plan, do not retry."),
    BUSY(4, "Busy: another holder's lease is live (see holder and expiresAt)."),
    STORE_UNAVAILABLE(
            5, "The store (or fence server, or the database being migrated) could not be reached or timed out."),
    CONFIG(6, "Bad configuration (store URL, configuration file, credentials, environment)."),
    INTERNAL(70, "Internal error: a bug in fence; rerun with --verbose and report it."),
    /**
     * {@code fence exec} only: the command it ran exited with a status fence returns for outcomes of its own
     * (2-6, 70) or with 125 itself, so it is not passed through; the status is in the last stderr line.
     */
    COMMAND_FAILED(
            125,
            "fence exec: the command failed with a status that fence uses for its own outcomes (2-6, 70, 125);"
                    + " its own status is on the last line of stderr: 'fence exec: exit=125 child-exit=N'.");

    private final int code;
    private final String description;

    ExitCode(int code, String description) {
        this.code = code;
        this.description = description;
    }

    public int code() {
        return code;
    }

    public String description() {
        return description;
    }
}
