package dev.fence.bench;

import dev.fence.server.VerdictClient;
import java.io.IOException;
import java.net.URI;

/**
 * The HTTP exchange alone, as a hook's request makes it (a new connection, one request, the answer read to
 * its end) but to {@code /healthz}, which fence serve answers on its I/O thread without a store, a credential
 * or a body: what the server's connections cost on this machine before any verdict is made. A verdict rate
 * is read against it: the share of the exchange rate that verdicts reach is the verdict path's own cost.
 */
final class ExchangeLoad implements LoadClient {
    private final URI server;

    ExchangeLoad(URI server) {
        this.server = server;
    }

    /** One exchange; accepted when the server answered 200. */
    @Override
    public VerdictClient.Answer attempt() throws IOException {
        String head = "GET /healthz HTTP/1.1\r\n"
                + "Host: " + server.getHost() + ":" + server.getPort() + "\r\n"
                + "Connection: close\r\n\r\n";
        String reply = VerdictClient.exchange(server, head, new byte[0]);
        String status = reply.isEmpty() ? "" : reply.substring(0, Math.max(0, reply.indexOf("\r\n")));
        if (status.contains(" 200 ")) {
            return new VerdictClient.Answer(true, false, status, "");
        }
        if (status.contains(" 503 ")) {
            return new VerdictClient.Answer(false, true, status, "");
        }
        throw new IOException("unexpected answer from /healthz: " + status);
    }
}
