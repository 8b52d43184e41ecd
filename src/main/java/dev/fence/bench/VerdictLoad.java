package dev.fence.bench;

import dev.fence.server.VerdictClient;
import java.io.IOException;
import java.net.URI;
import java.util.List;

/**
 * The server's verdict latency: pre-receive requests as the curl shim sends them ({@link VerdictClient}), one
 * after another, each a new fast-forward of one branch under a live lease with its ancestry fact, so that
 * every verdict reads the store, accepts and records the push.
 */
final class VerdictLoad implements LoadClient {
    private final VerdictClient client;

    VerdictLoad(URI server, String credential, String repoId, List<String> pushOptions) {
        this(new VerdictClient(server, credential, repoId, "bench", pushOptions));
    }

    VerdictLoad(VerdictClient client) {
        this.client = client;
    }

    /** Sends {@code warmup} verdict requests, then times {@code count} more; milliseconds each. */
    double[] run(int warmup, int count) throws IOException {
        double[] ms = new double[count];
        for (int i = 0; i < warmup + count; i++) {
            long start = System.nanoTime();
            verdict();
            long nanos = System.nanoTime() - start;
            if (i >= warmup) {
                ms[i - warmup] = nanos / 1e6;
            }
        }
        return ms;
    }

    /** One request: the next fast-forward; fails unless the server accepts it. */
    void verdict() throws IOException {
        client.verdict();
    }

    @Override
    public VerdictClient.Answer attempt() throws IOException {
        return client.attempt();
    }
}
