package dev.fence.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.Function;

/**
 * A loopback HTTP responder that is not fence serve: each connection's request is read whole, then
 * answered with the raw bytes a function makes of it, and closed. It stands in for a proxy, a captive page,
 * a wrong URL or a broken server.
 */
final class FakeHttpServer implements AutoCloseable {
    /** A request as received: its head, its body, and the {@code nonce} field of its form or JSON body (or null). */
    record Received(String head, String body, String nonce) {}

    private final ServerSocket socket;
    private final Thread thread;

    private FakeHttpServer(Function<Received, byte[]> answer) throws IOException {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        thread = new Thread(() -> serve(answer), "fake-http");
        thread.setDaemon(true);
        thread.start();
    }

    static FakeHttpServer start(Function<Received, byte[]> answer) {
        try {
            return new FakeHttpServer(answer);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A whole response: status line, Content-Type and a correct Content-Length, then the body. */
    static byte[] response(int status, String contentType, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + " X\r\nContent-Type: " + contentType + "\r\nContent-Length: " + b.length
                + "\r\nConnection: close\r\n\r\n";
        return (head + body).getBytes(StandardCharsets.UTF_8);
    }

    String url() {
        return "http://127.0.0.1:" + socket.getLocalPort();
    }

    private void serve(Function<Received, byte[]> answer) {
        while (!socket.isClosed()) {
            try (Socket s = socket.accept()) {
                s.setSoTimeout(5000);
                Received r = read(s.getInputStream());
                OutputStream out = s.getOutputStream();
                out.write(answer.apply(r));
                out.flush();
            } catch (IOException e) {
                // the next connection, or closed
            }
        }
    }

    private static Received read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            head.write(c);
            matched = (c == "\r\n\r\n".charAt(matched)) ? matched + 1 : (c == '\r' ? 1 : 0);
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        int length = 0;
        for (String line : h.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).strip());
            }
        }
        String body = new String(in.readNBytes(length), StandardCharsets.ISO_8859_1);
        String nonce = null;
        if (body.startsWith("{")) {
            try {
                JsonNode n = Json.read(body).get("nonce");
                nonce = n == null ? null : n.asText();
            } catch (JsonProcessingException e) {
                nonce = null;
            }
            return new Received(h, body, nonce);
        }
        for (String pair : body.split("&")) {
            if (pair.startsWith("nonce=")) {
                nonce = URLDecoder.decode(pair.substring(6), StandardCharsets.UTF_8);
            }
        }
        return new Received(h, body, nonce);
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closed
        }
    }
}
