package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The channel under a hook's Redis connection, against real TCP peers on loopback. */
class ChannelTransportTest {
    private ServerSocket server;
    private final List<Socket> accepted = new ArrayList<>();

    @BeforeEach
    void listen() throws IOException {
        assumeTrue(ChannelTransport.available(), "no platform selector provider on this JDK");
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void close() throws IOException {
        for (Socket s : accepted) {
            s.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private Socket accept() throws IOException {
        Socket s = server.accept();
        accepted.add(s);
        return s;
    }

    private ChannelTransport connect(int timeoutMillis) throws IOException {
        return ChannelTransport.connect("127.0.0.1", server.getLocalPort(), timeoutMillis);
    }

    @Test
    void bytesGoBothWays() throws Exception {
        try (ChannelTransport t = connect(2000)) {
            Socket peer = accept();
            t.output().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            assertArrayEquals(
                    "PING\r\n".getBytes(StandardCharsets.US_ASCII),
                    peer.getInputStream().readNBytes(6));
            peer.getOutputStream().write("+PONG\r\n".getBytes(StandardCharsets.US_ASCII));
            assertArrayEquals(
                    "+PONG\r\n".getBytes(StandardCharsets.US_ASCII), t.input().readNBytes(7));
            peer.getOutputStream().write('x');
            assertEquals('x', t.input().read());
        }
    }

    @Test
    void aReadWaitsForDataThatComesLater() throws Exception {
        try (ChannelTransport t = connect(2000)) {
            Socket peer = accept();
            CompletableFuture<Void> later = CompletableFuture.runAsync(() -> {
                try {
                    Thread.sleep(150);
                    peer.getOutputStream().write("late".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            long start = System.nanoTime();
            assertArrayEquals(
                    "late".getBytes(StandardCharsets.US_ASCII), t.input().readNBytes(4));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(100), "returned before the data");
            later.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aReadThatGetsNothingTimesOutAfterTheReadTimeout() throws Exception {
        try (ChannelTransport t = connect(5000)) {
            accept();
            t.readTimeout(200);
            long start = System.nanoTime();
            SocketTimeoutException e =
                    assertThrows(SocketTimeoutException.class, () -> t.input().read());
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals("Read timed out", e.getMessage());
            assertTrue(waited >= 190 && waited < 3000, "waited " + waited + " ms for a 200 ms timeout");
        }
    }

    @Test
    void theEndOfTheStreamReadsAsMinusOne() throws Exception {
        try (ChannelTransport t = connect(2000)) {
            accept().close();
            assertEquals(-1, t.input().read());
            assertEquals(-1, t.input().read(new byte[8], 0, 8));
        }
    }

    @Test
    void aWriteLargerThanTheSocketBuffersGoesOutWholeToASlowReader() throws Exception {
        byte[] data = new byte[8 * 1024 * 1024];
        new Random(7).nextBytes(data);
        try (ChannelTransport t = connect(10_000)) {
            Socket peer = accept();
            CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
                try {
                    // Slow at first, so that the writer finds the send buffer full and has to wait.
                    Thread.sleep(200);
                    InputStream in = peer.getInputStream();
                    MessageDigest digest = MessageDigest.getInstance("SHA-256");
                    byte[] buffer = new byte[64 * 1024];
                    long total = 0;
                    while (total < data.length) {
                        int n = in.read(buffer);
                        if (n < 0) {
                            break;
                        }
                        digest.update(buffer, 0, n);
                        total += n;
                    }
                    return digest.digest();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            OutputStream out = t.output();
            out.write(data, 0, data.length);
            assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(data), received.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aPortNobodyListensOnRefusesTheConnection() throws IOException {
        int port;
        try (ServerSocket gone = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = gone.getLocalPort();
        }
        assertThrows(ConnectException.class, () -> ChannelTransport.connect("127.0.0.1", port, 2000));
    }

    @Test
    void aConnectionTheServerDoesNotTakeUpTimesOut() throws Exception {
        // A listener whose accept queue is full drops further connection requests unanswered, as a server
        // behind a black hole would.
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<java.nio.channels.SocketChannel> queued = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    java.nio.channels.SocketChannel c = java.nio.channels.SocketChannel.open();
                    c.configureBlocking(false);
                    c.connect(full.getLocalSocketAddress());
                    queued.add(c);
                }
                long start = System.nanoTime();
                SocketTimeoutException e = assertThrows(
                        SocketTimeoutException.class,
                        () -> ChannelTransport.connect("127.0.0.1", full.getLocalPort(), 300));
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals("Connect timed out", e.getMessage());
                assertTrue(waited >= 290 && waited < 5000, "waited " + waited + " ms for a 300 ms timeout");
            } finally {
                for (java.nio.channels.SocketChannel c : queued) {
                    c.close();
                }
            }
        }
    }

    @Test
    void aWaitEndsAtOnceWhenTheThreadIsInterrupted() throws Exception {
        try (ChannelTransport t = connect(2000)) {
            accept();
            t.readTimeout(30_000);
            Thread reader = Thread.currentThread();
            CompletableFuture<Void> interrupter = CompletableFuture.runAsync(() -> {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                reader.interrupt();
            });
            long start = System.nanoTime();
            assertThrows(InterruptedIOException.class, () -> t.input().read());
            assertTrue(Thread.interrupted(), "the interrupt is left for the caller to see");
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "waited for the read timeout");
            interrupter.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void closedItFailsItsCallers() throws Exception {
        ChannelTransport t = connect(2000);
        accept();
        t.close();
        t.close();
        assertThrows(IOException.class, () -> t.output().write(1));
        assertThrows(IOException.class, () -> t.input().read());
    }
}
