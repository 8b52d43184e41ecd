package dev.fence.core;

/**
 * The store could not be reached, answered too slowly, or failed mid-operation. The operation may or
 * may not have taken effect only where its Javadoc says so; every store operation is atomic, so a
 * failed one never leaves half its writes behind.
 */
public class StoreUnavailableException extends FenceException {
    private static final long serialVersionUID = 1L;

    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }

    public StoreUnavailableException(String message) {
        super(message);
    }
}
