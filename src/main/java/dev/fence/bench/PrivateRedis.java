package dev.fence.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away {@code redis-server} on a free loopback port, without persistence, for the benchmark and
 * the archive's training run: never a shared server.
 */
public final class PrivateRedis implements AutoCloseable {
    private final Process process;
    private final int port;

    private PrivateRedis(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** The {@code redis-server} found on {@code path} (a PATH value), or null. */
    public static Path find(String path, String name) {
        if (path == null) {
            return null;
        }
        for (String dir : path.split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * Starts {@code redisServer} on a free loopback port and waits until it answers.
     *
     * @throws IOException when it does not start or answer within 5 s
     */
    public static PrivateRedis start(Path redisServer) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Process p = new ProcessBuilder(List.of(
                        redisServer.toString(),
                        "--bind",
                        "127.0.0.1",
                        "--port",
                        Integer.toString(port),
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--protected-mode",
                        "yes"))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        PrivateRedis redis = new PrivateRedis(p, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                break;
            }
            if (redis.ping()) {
                return redis;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        redis.close();
        throw new IOException(redisServer + " did not start on 127.0.0.1:" + port);
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    private boolean ping() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            s.setSoTimeout(500);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] reply = new byte[7];
            int n = in.readNBytes(reply, 0, 7);
            return n == 7 && new String(reply, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
