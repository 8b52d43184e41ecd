package dev.fence.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * Requests written byte for byte on a new connection, for what a well-behaved client never sends; the
 * answer is read to the end of the connection.
 */
final class RawHttp {
    private RawHttp() {}

    /** An answer: status (0 when none came), the head and the body. */
    record Answer(int status, String head, String body) {}

    /** Sends {@code request} (sent with {@code Connection: close} semantics) and reads the answer. */
    static Answer send(URI server, byte[] request, int timeoutMs) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(server.getHost(), server.getPort()), timeoutMs);
            s.setSoTimeout(timeoutMs);
            s.getOutputStream().write(request);
            s.getOutputStream().flush();
            s.shutdownOutput();
            return parse(readAll(s.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Answer send(URI server, String request, int timeoutMs) {
        return send(server, request.getBytes(StandardCharsets.ISO_8859_1), timeoutMs);
    }

    /** A request with a body and the Content-Length of its bytes. */
    static byte[] request(String method, String path, String bearer, String contentType, byte[] body) {
        StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        if (bearer != null) {
            head.append("Authorization: Bearer ").append(bearer).append("\r\n");
        }
        if (contentType != null) {
            head.append("Content-Type: ").append(contentType).append("\r\n");
        }
        head.append("Content-Length: ").append(body.length).append("\r\nConnection: close\r\n\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] out = new byte[h.length + body.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
            }
        } catch (java.net.SocketException reset) {
            // a server that closes without reading everything may reset the connection after its answer
        }
        return out.toByteArray();
    }

    static Answer parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.UTF_8);
        int split = text.indexOf("\r\n\r\n");
        String head = split < 0 ? text : text.substring(0, split);
        String body = split < 0 ? "" : text.substring(split + 4);
        int status = 0;
        if (head.startsWith("HTTP/1.") && head.length() >= 12) {
            try {
                status = Integer.parseInt(head.substring(9, 12));
            } catch (NumberFormatException e) {
                status = 0;
            }
        }
        return new Answer(status, head, body);
    }
}
