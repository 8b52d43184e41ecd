package dev.fence.bench;

import dev.fence.server.VerdictClient;
import java.io.IOException;

/** One of the concurrent clients of a load on fence serve: sends one request and says what it answered. */
interface LoadClient {
    /**
     * One request.
     *
     * @throws IOException on a connection failure, a time-out, or an answer of no expected kind
     */
    VerdictClient.Answer attempt() throws IOException;
}
