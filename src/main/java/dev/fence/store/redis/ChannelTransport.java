package dev.fence.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.TimeUnit;

/**
 * A plain TCP {@link Transport} for a process that makes a few calls and exits (a hook): a non-blocking
 * {@link SocketChannel} whose waits go through a {@link Selector} of its own, so connect and read timeouts
 * hold as on a socket.
 *
 * <p><b>Why not a {@link java.net.Socket}.</b> On JDK 17 the first {@code Socket} of a process links two
 * lambdas in the JDK's own socket classes ({@code SocketImpl}'s class initialiser, {@code NioSocketImpl}'s
 * closer), and the first lambda of a process starts the whole method-handle machinery, generating a class
 * for it at run time: 5 to 9 ms of a hook's critical path, which no JDK 17 class-data archive can hold. A
 * {@code SocketChannel} links none, except that {@link SelectorProvider#provider()} finds the platform's
 * provider through a lambda. This class therefore takes the platform's provider class by name and makes its
 * instance with {@code sun.misc.Unsafe.allocateInstance} (the provider classes of JDK 17 to 25 have no
 * fields, and their constructors do nothing but a security check): a public type from then on, driven
 * through public API only. Where that cannot be done ({@link #available()} is false: another platform, a JDK
 * without the class or without {@code jdk.unsupported}), {@link RespConnection} uses a socket.
 *
 * <p>Not thread-safe: one call at a time (a hook's store serialises its calls). The provider it makes is
 * used for nothing but its own channels and selectors.
 */
final class ChannelTransport implements Transport {
    /** The Linux provider of JDK 17 to 25 (git servers run on Linux; elsewhere {@link #available()} is false). */
    private static final String PLATFORM_PROVIDER = "sun.nio.ch.EPollSelectorProvider";

    private static final SelectorProvider PROVIDER = platformProvider();

    private final SocketChannel channel;
    private final Selector selector;
    private final SelectionKey key;
    private final InputStream input = new Input();
    private final OutputStream output = new Output();
    private final long writeTimeoutNanos;
    private long readTimeoutNanos;

    private ChannelTransport(SocketChannel channel, Selector selector, SelectionKey key, int timeoutMillis) {
        this.channel = channel;
        this.selector = selector;
        this.key = key;
        this.writeTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        this.readTimeoutNanos = writeTimeoutNanos;
    }

    /** Whether this platform's provider could be had without {@link SelectorProvider#provider()}. */
    static boolean available() {
        return PROVIDER != null;
    }

    /**
     * Connects to {@code host:port} within {@code timeoutMillis}, which is then also the read and write
     * timeout.
     *
     * @throws IllegalStateException when not {@link #available()}
     * @throws IOException as {@link java.net.Socket#connect} would: {@link UnknownHostException}, {@link
     *     java.net.ConnectException}, {@link SocketTimeoutException}
     */
    static ChannelTransport connect(String host, int port, int timeoutMillis) throws IOException {
        if (PROVIDER == null) {
            throw new IllegalStateException("no platform selector provider");
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new UnknownHostException(host);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        SocketChannel channel = PROVIDER.openSocketChannel();
        Selector selector = null;
        try {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            selector = PROVIDER.openSelector();
            ChannelTransport t = new ChannelTransport(channel, selector, channel.register(selector, 0), timeoutMillis);
            if (!channel.connect(address)) {
                while (!channel.finishConnect()) {
                    t.await(SelectionKey.OP_CONNECT, deadline, "Connect timed out");
                }
            }
            return t;
        } catch (IOException | RuntimeException e) {
            closeQuietly(selector, channel);
            throw e;
        }
    }

    @Override
    public InputStream input() {
        return input;
    }

    @Override
    public OutputStream output() {
        return output;
    }

    @Override
    public void readTimeout(int millis) {
        readTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, millis));
    }

    @Override
    public void close() {
        closeQuietly(selector, channel);
    }

    /**
     * Waits until the channel is ready for {@code ops}, or throws a {@link SocketTimeoutException} with
     * {@code timedOut} once {@code deadline} ({@link System#nanoTime()}) has passed.
     */
    private void await(int ops, long deadline, String timedOut) throws IOException {
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new SocketTimeoutException(timedOut);
            }
            // select(0) would wait for ever: round a last fraction of a millisecond up.
            int ready = selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            selector.selectedKeys().clear();
            if (ready > 0) {
                return;
            }
            if (Thread.currentThread().isInterrupted()) {
                // A selector returns at once for an interrupted thread: the caller has given up on the call.
                throw new InterruptedIOException("interrupted while waiting for the server");
            }
        }
    }

    private static void closeQuietly(Selector selector, SocketChannel channel) {
        try {
            if (selector != null) {
                selector.close();
            }
        } catch (IOException e) {
            // nothing to do
        }
        try {
            channel.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    /**
     * The platform's provider, made as described in the class comment, or null. {@code allocateInstance} is
     * called through a compiled reference (javac warns about it: the one warning of its kind in the build),
     * not through {@link java.lang.reflect.Method#invoke}: reflecting on a JDK method reads its annotations,
     * which makes a proxy class, which links lambdas, which is what this class is for avoiding.
     */
    private static SelectorProvider platformProvider() {
        try {
            Class<?> provider = Class.forName(PLATFORM_PROVIDER, false, null);
            if (!SelectorProvider.class.isAssignableFrom(provider)) {
                return null;
            }
            Field theUnsafe = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            return (SelectorProvider) ((sun.misc.Unsafe) theUnsafe.get(null)).allocateInstance(provider);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** Reads what the channel has, waiting up to the read timeout for the first byte. */
    private final class Input extends InputStream {
        private final byte[] one = new byte[1];

        @Override
        public int read() throws IOException {
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            ByteBuffer buffer = ByteBuffer.wrap(b, off, len);
            int n;
            long deadline = 0;
            boolean waiting = false;
            while ((n = channel.read(buffer)) == 0) {
                if (!waiting) {
                    deadline = System.nanoTime() + readTimeoutNanos;
                    waiting = true;
                }
                await(SelectionKey.OP_READ, deadline, "Read timed out");
            }
            return n;
        }
    }

    /** Writes everything it is given, waiting up to the connection's timeout whenever the send buffer is full. */
    private final class Output extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            ByteBuffer buffer = ByteBuffer.wrap(b, off, len);
            long deadline = 0;
            boolean waiting = false;
            while (buffer.hasRemaining()) {
                if (channel.write(buffer) == 0) {
                    if (!waiting) {
                        deadline = System.nanoTime() + writeTimeoutNanos;
                        waiting = true;
                    }
                    await(SelectionKey.OP_WRITE, deadline, "Write timed out");
                }
            }
        }
    }
}
