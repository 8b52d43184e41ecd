package dev.fence.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * The byte stream under a {@link RespConnection}: a {@link java.net.Socket} ({@link SocketTransport}). A read that waits longer than the read timeout fails with a {@link
 * java.net.SocketTimeoutException}, and a failed connection with another {@link IOException}.
 */
interface Transport extends AutoCloseable {
    /** The stream replies are read from; the same one on every call. */
    InputStream input() throws IOException;

    /** The stream commands are written to (unbuffered); the same one on every call. */
    OutputStream output() throws IOException;

    /** How long a read waits for data from now on, in ms (at least 1). */
    void readTimeout(int millis) throws IOException;

    /** Closes the connection; never throws. */
    @Override
    void close();
}
