package dev.fence.bench;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The server's verdict latency: pre-receive requests as the curl shim sends them (a form with a nonce, the
 * versioned text answer, a new connection each), one after another, each a new fast-forward of one branch under a live lease
 * with its ancestry fact, so that every verdict reads the store, accepts and records the push.
 */
final class VerdictLoad implements LoadClient {
    private final URI server;
    private final String credential;
    private final String repoId;
    private final List<String> pushOptions;
    private String tip = "0".repeat(40);

    VerdictLoad(URI server, String credential, String repoId, List<String> pushOptions) {
        this.server = server;
        this.credential = credential;
        this.repoId = repoId;
        this.pushOptions = pushOptions;
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
        Answer a = attempt();
        if (!a.accepted()) {
            throw new IOException("the server did not accept a verdict request: " + a.status() + " " + a.text());
        }
    }

    /**
     * What the server answered one request: its status line and body.
     *
     * @param accepted the verdict accepted the push (the next request fast-forwards from it)
     * @param refused the server refused the push quickly as the shim treats a store that is down (a 503 when
     *     its queues are full, or a verdict with a non-zero exit)
     */
    record Answer(boolean accepted, boolean refused, String status, String text) {}

    /**
     * One request, as {@link #verdict()}, reporting instead of failing on a refusal.
     *
     * @throws IOException on a connection failure, a time-out, or an answer that is neither
     */
    @Override
    public Answer attempt() throws IOException {
        String next = randomId();
        StringBuilder form = new StringBuilder();
        field(form, "stdin", tip + " " + next + " refs/heads/main\n");
        field(form, "env", "FENCE_REPO_ID=" + repoId);
        field(form, "env", "USER=bench");
        for (String o : pushOptions) {
            field(form, "option", o);
        }
        if (!tip.equals("0".repeat(40))) {
            field(form, "fact", tip + " " + next + " yes");
        }
        String nonce = randomId().substring(0, 32);
        field(form, "nonce", nonce);
        byte[] body = form.toString().getBytes(StandardCharsets.US_ASCII);
        String head = "POST /v1/hook/pre-receive HTTP/1.1\r\n"
                + "Host: " + server.getHost() + ":" + server.getPort() + "\r\n"
                + "Authorization: Bearer " + credential + "\r\n"
                + "Accept: text/plain\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: " + body.length + "\r\n"
                + "Connection: close\r\n\r\n";
        String reply = LoadClient.exchange(server, head, body);
        int split = reply.indexOf("\r\n\r\n");
        String status = reply.isEmpty() ? "" : reply.substring(0, Math.max(0, reply.indexOf("\r\n")));
        String answer = split < 0 ? "" : reply.substring(split + 4);
        if (status.contains(" 200 ") && answer.startsWith("fence-verdict/1 nonce=" + nonce + " exit=0\n")) {
            tip = next;
            return new Answer(true, false, status, answer.trim());
        }
        if (status.contains(" 503 ")
                || status.contains(" 200 ") && answer.startsWith("fence-verdict/1 nonce=" + nonce)) {
            return new Answer(false, true, status, answer.trim());
        }
        throw new IOException("unexpected answer to a verdict request: " + status + " " + answer.trim());
    }

    private static void field(StringBuilder form, String name, String value) {
        if (form.length() > 0) {
            form.append('&');
        }
        form.append(name).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
    }

    static String randomId() {
        StringBuilder id = new StringBuilder(40);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < 40; i++) {
            id.append(Character.forDigit(r.nextInt(16), 16));
        }
        return id.toString();
    }
}
