package dev.fence.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/** One of the concurrent clients of a load on fence serve: sends one request and says what it answered. */
interface LoadClient {
    /**
     * One request.
     *
     * @throws IOException on a connection failure, a time-out, or an answer of no expected kind
     */
    VerdictLoad.Answer attempt() throws IOException;

    /**
     * One exchange as a hook makes it: a new connection (2 s to connect, 5 s for each read), the request
     * head and body in one write, as the curl shim writes them (with no delay, two writes would reach the
     * server as two packets, and it would wait for the second), and the whole answer, read until the
     * server closes.
     */
    static String exchange(URI server, String head, byte[] body) throws IOException {
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] request = java.util.Arrays.copyOf(h, h.length + body.length);
        System.arraycopy(body, 0, request, h.length, body.length);
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(server.getHost(), server.getPort()), 2000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(request);
            out.flush();
            // Answers are a few hundred bytes: a small buffer, where readAllBytes takes 8 KB a call, and the
            // clients' garbage is collected in the server's JVM, whose pauses the rows measure.
            InputStream in = s.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream(512);
            byte[] buffer = new byte[1024];
            for (int n; (n = in.read(buffer)) != -1; ) {
                answer.write(buffer, 0, n);
            }
            return answer.toString(StandardCharsets.UTF_8);
        }
    }
}
