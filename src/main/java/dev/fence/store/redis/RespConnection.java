package dev.fence.store.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * One plain RESP2 connection to Redis, for processes that make a few calls and exit (a hook): connect,
 * AUTH and SELECT when the URL asks for them (answered before anything else is sent), then commands one
 * at a time, the first one preceded in the same write by CLIENT SETNAME. A pool and a
 * full client cost a fresh JVM more to start than the calls themselves take. It runs over a {@link
 * Transport}, a socket ({@link #open}).
 *
 * <p>Replies decode as Jedis decodes a script's reply: bulk and simple strings to {@code String},
 * integers to {@code Long}, arrays to {@code List}, nil to null. Failures are Jedis's exception types,
 * so the store translates them in one place: a connection failure or timeout is a {@link
 * JedisConnectionException}, an error reply a {@link JedisDataException} ({@link
 * JedisNoScriptException}, {@link JedisAccessControlException} for refused credentials).
 *
 * <p>Not thread-safe: the store serialises its calls ({@link RespPipeline} shares one between threads,
 * writing from one thread at a time and reading on one).
 */
final class RespConnection implements RespCalls, AutoCloseable {
    private static final int MAX_BULK = 512 * 1024 * 1024;

    private final Transport transport;
    private final Input in;
    private final OutputStream out;

    /** The client name was sent with the first call, whose reply that call reads (and ignores) first. */
    private boolean pendingName;

    /** The read timeout as last set by {@link #readTimeout}; the connection's timeout until then. */
    private int readTimeoutMillis;

    private RespConnection(Transport transport, int timeoutMillis) throws IOException {
        this.transport = transport;
        this.in = new Input(transport.input());
        this.out = new BufferedOutputStream(transport.output(), 16 * 1024);
        this.readTimeoutMillis = timeoutMillis;
    }

    /**
     * Connects to {@code url} over a socket (TLS with host name verification for {@code rediss://}),
     * authenticates and selects the database (one round trip, when the URL asks for either), and names
     * itself (with the first command). For a long-running process: reads and writes may come from two
     * threads at once.
     */
    static RespConnection open(RedisUrl url, int timeoutMillis, String clientName) {
        Transport transport;
        try {
            transport = SocketTransport.connect(url, timeoutMillis);
        } catch (IOException e) {
            throw connectFailed(url, e);
        }
        return handshake(url, transport, timeoutMillis, clientName);
    }

    private static JedisConnectionException connectFailed(RedisUrl url, IOException e) {
        return new JedisConnectionException("Failed to connect to " + url.address() + ": " + e.getMessage(), e);
    }

    private static RespConnection handshake(RedisUrl url, Transport transport, int timeoutMillis, String clientName) {
        try {
            RespConnection c = new RespConnection(transport, timeoutMillis);
            List<List<String>> handshake = new ArrayList<>();
            if (url.password() != null) {
                handshake.add(
                        url.user() != null
                                ? List.of("AUTH", url.user(), url.password())
                                : List.of("AUTH", url.password()));
            }
            if (url.database() != 0) {
                handshake.add(List.of("SELECT", Integer.toString(url.database())));
            }
            // AUTH and SELECT are answered before anything else is sent: a command queued behind a refused one
            // would still run, as the default user or in database 0. The client name is only a label: without
            // them, it goes out with the first command, in one write (a round trip less for a hook, which
            // makes three), and a refusal of it is ignored, as the command behind it has run by then.
            List<String> name = List.of("CLIENT", "SETNAME", clientName);
            if (handshake.isEmpty()) {
                c.write(name);
                c.pendingName = true;
                return c;
            }
            handshake.add(name);
            for (List<String> command : handshake) {
                c.write(command);
            }
            c.out.flush();
            JedisDataException refused = null;
            for (List<String> command : handshake) {
                try {
                    c.read();
                } catch (JedisDataException e) {
                    if (refused == null) {
                        refused = command.get(0).equals("AUTH") || isAuthError(e.getMessage())
                                ? new JedisAccessControlException(e.getMessage())
                                : e;
                    }
                }
            }
            if (refused != null) {
                c.close();
                throw refused;
            }
            return c;
        } catch (IOException e) {
            transport.close();
            throw connectFailed(url, e);
        }
    }

    /** Sends one command (after the client name, on a first call that carries it) and returns its reply. */
    @Override
    public Object call(List<String> command) {
        try {
            write(command);
            out.flush();
            if (pendingName) {
                pendingName = false;
                try {
                    read();
                } catch (JedisDataException e) {
                    // Only the connection's label; the command behind it has run either way.
                }
            }
            return read();
        } catch (IOException e) {
            throw new JedisConnectionException(e.getMessage() == null ? e.toString() : e.getMessage(), e);
        }
    }

    /** Runs {@code call} with a longer read timeout (WAIT), then restores it. */
    Object callWithTimeout(List<String> command, int millis) {
        try {
            transport.readTimeout(millis);
            try {
                return call(command);
            } finally {
                transport.readTimeout(readTimeoutMillis);
            }
        } catch (IOException e) {
            throw new JedisConnectionException(e.getMessage(), e);
        }
    }

    /**
     * Completes the handshake now (the client name's reply, when it was to ride with the first call): for
     * a pipelined connection, whose replies come back to whichever caller reads them.
     */
    void forPipelining() throws IOException {
        if (pendingName) {
            pendingName = false;
            out.flush();
            try {
                read();
            } catch (JedisDataException e) {
                // Only the connection's label.
            }
        }
    }

    /** Whether replies, or part of one, have been read from the connection and not yet taken (no system call). */
    boolean hasReceived() {
        return in.buffered() > 0;
    }

    /** How long the next reads wait for data, in ms (at least 1): each pipelined reader's own deadline. */
    void readTimeout(int millis) throws IOException {
        if (millis != readTimeoutMillis) {
            transport.readTimeout(millis);
            readTimeoutMillis = millis;
        }
    }

    /** Buffers {@code command} for sending; {@link #flush} sends what is buffered. */
    void send(List<String> command) throws IOException {
        write(command);
    }

    void flush() throws IOException {
        out.flush();
    }

    /**
     * Reads the next reply.
     *
     * @throws JedisDataException for an error reply (the connection stays usable)
     * @throws IOException when the connection fails or the server sends something that is not RESP
     */
    Object receive() throws IOException {
        return read();
    }

    private void write(List<String> command) throws IOException {
        out.write('*');
        writeNumber(command.size());
        for (String arg : command) {
            byte[] b = arg.getBytes(StandardCharsets.UTF_8);
            out.write('$');
            writeNumber(b.length);
            out.write(b);
            out.write('\r');
            out.write('\n');
        }
    }

    private void writeNumber(long n) throws IOException {
        out.write(Long.toString(n).getBytes(StandardCharsets.US_ASCII));
        out.write('\r');
        out.write('\n');
    }

    private Object read() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("the server closed the connection");
        }
        switch (type) {
            case '+':
                return line();
            case '-': {
                String message = line();
                if (message.startsWith("NOSCRIPT")) {
                    throw new JedisNoScriptException(message);
                }
                if (isAuthError(message)) {
                    throw new JedisAccessControlException(message);
                }
                throw new JedisDataException(message);
            }
            case ':':
                return parseLong(line());
            case '$': {
                long length = parseLong(line());
                if (length < 0) {
                    return null;
                }
                if (length > MAX_BULK) {
                    throw new IOException("a reply of " + length + " bytes is too long");
                }
                byte[] b = in.readNBytes((int) length);
                if (b.length != length || in.read() != '\r' || in.read() != '\n') {
                    throw new EOFException("the server closed the connection mid-reply");
                }
                return new String(b, StandardCharsets.UTF_8);
            }
            case '*': {
                long count = parseLong(line());
                if (count < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>((int) Math.min(count, 1024));
                JedisDataException nested = null;
                for (long i = 0; i < count; i++) {
                    try {
                        items.add(read());
                    } catch (JedisDataException e) {
                        // An error inside an array is a value (as Jedis keeps it); the script's callers never
                        // return one, so it is reported once the array is read.
                        nested = nested == null ? e : nested;
                        items.add(null);
                    }
                }
                if (nested != null) {
                    throw nested;
                }
                return items;
            }
            default:
                throw new IOException("not a RESP reply (type byte " + type + ")");
        }
    }

    private String line() throws IOException {
        StringBuilder s = new StringBuilder();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the server closed the connection mid-reply");
            }
            if (b == '\r') {
                if (in.read() != '\n') {
                    throw new IOException("malformed RESP line");
                }
                return s.toString();
            }
            s.append((char) b);
        }
    }

    private static long parseLong(String s) throws IOException {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IOException("malformed RESP number '" + s + "'");
        }
    }

    private static boolean isAuthError(String message) {
        return message != null
                && (message.startsWith("WRONGPASS") || message.startsWith("NOAUTH") || message.startsWith("NOPERM"));
    }

    @Override
    public void close() {
        transport.close();
    }

    /** The transport's input, buffered, telling how much it holds. */
    private static final class Input extends BufferedInputStream {
        Input(InputStream transportInput) {
            super(transportInput, 16 * 1024);
        }

        /** Bytes read from the transport and not yet taken. */
        synchronized int buffered() {
            return count - pos;
        }
    }
}
