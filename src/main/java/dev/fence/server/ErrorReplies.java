package dev.fence.server;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The answers Jetty itself gives, for requests it refuses before fence sees them (a malformed request
 * line, header or chunk, headers past the size limit): the same error body as fence's own, JSON or two
 * text lines, with a message that says what was wrong. Never a stack trace.
 */
final class ErrorReplies extends ErrorHandler {
    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        int status = response.getStatus();
        String message = (String) request.getAttribute(ERROR_MESSAGE);
        Throwable cause = (Throwable) request.getAttribute(ERROR_EXCEPTION);
        if (cause instanceof HttpException h) {
            status = h.getCode();
            if (message == null) {
                message = h.getReason();
            }
        }
        if (status == 505 || status == 501) {
            // An unknown protocol version or transfer coding is the client's mistake, as any other.
            status = 400;
        } else if (status < 400) {
            status = 500;
        }
        Reply reply = Reply.error(status, describe(status, message), wantsText(request));
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, reply.contentType());
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
        response.write(true, ByteBuffer.wrap(reply.body()), callback);
        return true;
    }

    @Override
    public ByteBuffer badMessageError(int status, String reason, org.eclipse.jetty.http.HttpFields.Mutable fields) {
        Reply reply = Reply.error(status, describe(status, reason), false);
        fields.put(HttpHeader.CONTENT_TYPE, reply.contentType());
        fields.put(HttpHeader.CACHE_CONTROL, "no-store");
        return ByteBuffer.wrap(reply.body());
    }

    private static boolean wantsText(Request request) {
        String accept = request.getHeaders().get(HttpHeader.ACCEPT);
        return accept != null && accept.toLowerCase(java.util.Locale.ROOT).contains("text/plain");
    }

    /** Jetty's reason, as a sentence for the caller; a status alone when Jetty gave none. */
    static String describe(int status, String reason) {
        String what = reason == null || reason.isBlank() ? HttpStatus.getMessage(status) : reason;
        if (status >= 500 && status != 505 && status != 501) {
            return "internal error";
        }
        return "the request is malformed: " + what;
    }
}
