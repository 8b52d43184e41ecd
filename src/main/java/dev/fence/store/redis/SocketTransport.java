package dev.fence.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.Socket;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A {@link Transport} over a {@link Socket}: TLS with host name verification for {@code rediss://}, the read
 * timeout the socket's {@code SO_TIMEOUT}. Reads and writes may come from different threads at once (a
 * {@link RespPipeline} writes on one caller's thread while another reads).
 */
final class SocketTransport implements Transport {
    private final Socket socket;

    private SocketTransport(Socket socket) {
        this.socket = socket;
    }

    /** Connects to the URL's server within {@code timeoutMillis}, which is then also the read timeout. */
    static SocketTransport connect(RedisUrl url, int timeoutMillis) throws IOException {
        Socket socket = null;
        try {
            // Directly, never through a SOCKS proxy from the JVM's settings: a store is reached as its URL says,
            // and the proxy machinery (selector, SOCKS wrapper) costs a hook's fresh JVM milliseconds.
            socket = new Socket(Proxy.NO_PROXY);
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(url.host(), url.port()), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            if (url.tls()) {
                SSLSocket tls = (SSLSocket) ((SSLSocketFactory) SSLSocketFactory.getDefault())
                        .createSocket(socket, url.host(), url.port(), true);
                SSLParameters p = tls.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                tls.setSSLParameters(p);
                tls.startHandshake();
                socket = tls;
            }
            return new SocketTransport(socket);
        } catch (IOException | RuntimeException e) {
            closeQuietly(socket);
            throw e;
        }
    }

    @Override
    public InputStream input() throws IOException {
        return socket.getInputStream();
    }

    @Override
    public OutputStream output() throws IOException {
        return socket.getOutputStream();
    }

    @Override
    public void readTimeout(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static void closeQuietly(Socket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // nothing to do
            }
        }
    }
}
