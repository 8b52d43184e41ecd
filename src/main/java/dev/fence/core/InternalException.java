package dev.fence.core;

/** A broken invariant inside fence: a bug to report, never the user's fault. */
public class InternalException extends FenceException {
    private static final long serialVersionUID = 1L;

    public InternalException(String message) {
        super(message);
    }

    public InternalException(String message, Throwable cause) {
        super(message, cause);
    }
}
