package dev.fence.server;

import java.util.function.Consumer;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.NanoTime;

/**
 * One line per request, in the server's log, once its answer is sent (Jetty calls it for every request it
 * parsed, including those it answered itself):
 *
 * <pre>access 127.0.0.1 POST /v1/leases/acquire 200 183B 2ms caller=agent-a</pre>
 *
 * <p>What it never writes: the query string, headers (so no {@code Authorization}), the body (so no proof)
 * or anything the caller sent but the method and path, and those only as printable ASCII cut to a fixed
 * length, so a caller can neither forge log lines nor flood them. The caller is the credential's name,
 * never its secret; {@code -} when the request carried none that was accepted.
 */
final class AccessLog implements RequestLog {
    /** The request attribute holding the authenticated credential's name. */
    static final String CALLER = AccessLog.class.getName() + ".caller";

    private static final int MAX_METHOD = 16;
    private static final int MAX_PATH = 120;

    private final Consumer<String> log;

    AccessLog(Consumer<String> log) {
        this.log = log;
    }

    @Override
    public void log(Request request, Response response) {
        Object caller = request.getAttribute(CALLER);
        log.accept("access " + Request.getRemoteAddr(request)
                + " " + printable(request.getMethod(), MAX_METHOD)
                + " " + printable(request.getHttpURI().getPath(), MAX_PATH)
                + " " + response.getStatus()
                + " " + Response.getContentBytesWritten(response) + "B"
                + " " + NanoTime.millisSince(request.getBeginNanoTime()) + "ms"
                + " caller=" + (caller == null ? "-" : printable(caller.toString(), MAX_PATH)));
    }

    /** {@code text} with every character outside printable ASCII (and space) as {@code ?}, cut to {@code max}. */
    static String printable(String text, int max) {
        if (text == null || text.isEmpty()) {
            return "-";
        }
        StringBuilder b = new StringBuilder(Math.min(text.length(), max + 1));
        for (int i = 0; i < text.length() && b.length() < max; i++) {
            char c = text.charAt(i);
            b.append(c > ' ' && c < 127 ? c : '?');
        }
        if (text.length() > max) {
            b.append("...");
        }
        return b.toString();
    }
}
