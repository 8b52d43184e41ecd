package dev.fence.core;

/**
 * Root of fence's failures: something stopped fence from deciding or acting. Outcomes such as FENCED,
 * busy or rejected are values, not exceptions; these are for "could not decide".
 *
 * <p>Messages are written for the operator who reads them on a terminal; the stack trace is shown only
 * on request ({@code --verbose}).
 */
public abstract class FenceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    protected FenceException(String message) {
        super(message);
    }

    protected FenceException(String message, Throwable cause) {
        super(message, cause);
    }
}
