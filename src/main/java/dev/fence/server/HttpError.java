package dev.fence.server;

/**
 * A request the server answers with an error status and a message for the caller. The message is shown
 * to the caller: it never contains a secret, a proof or a store URL.
 */
final class HttpError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;

    HttpError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    static HttpError badRequest(String message) {
        return new HttpError(400, message);
    }

    static HttpError unauthorized(String message) {
        return new HttpError(401, message);
    }

    static HttpError forbidden(String message) {
        return new HttpError(403, message);
    }

    int status() {
        return status;
    }

    /** The fence exit code a client maps this status to. */
    static int exitCodeOf(int status) {
        return switch (status) {
            case 401, 403 -> 6;
            case 408, 503, 504 -> 5;
            case 500 -> 70;
            default -> 2;
        };
    }
}
