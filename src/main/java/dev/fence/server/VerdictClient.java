package dev.fence.server;

import dev.fence.core.Grant;
import dev.fence.core.LeaseService;
import dev.fence.core.Resources;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Pre-receive verdict requests to fence serve as the curl shim sends them (a form with a nonce, the versioned
 * text answer, a new connection each), each a new fast-forward of one branch under a live lease with its
 * ancestry fact, so that every verdict reads the store, accepts and records the push. For a server's own
 * warm-up ({@link Warmup}) and for the bench's loads, not for hooks: the request is written by hand, on a
 * plain socket, because its bytes are the point (one write, as the shim writes it). Not thread-safe: one
 * client follows one branch.
 */
public final class VerdictClient {
    private static final String NO_COMMIT = "0".repeat(40);

    private final URI server;
    private final String credential;
    private final String repoId;
    private final String pusher;
    private final List<String> pushOptions;
    private String tip = NO_COMMIT;

    /**
     * @param server fence serve's base URI (plain HTTP)
     * @param credential {@code <name>:<secret>} of a hook credential
     * @param repoId the repository whose {@code refs/heads/main} the requests push
     * @param pusher the account the pushes come from ({@code USER})
     * @param pushOptions the push options each request carries, e.g. the lease's {@code fence=} and {@code
     *     fence-proof=}
     */
    public VerdictClient(URI server, String credential, String repoId, String pusher, List<String> pushOptions) {
        this.server = server;
        this.credential = credential;
        this.repoId = repoId;
        this.pusher = pusher;
        this.pushOptions = List.copyOf(pushOptions);
    }

    /**
     * A client of {@code server} pushing {@code repoId}'s {@code refs/heads/main} under a lease taken now from
     * {@code leases}, held by {@code account} (also the pusher) for an hour: longer than any warm-up or load.
     *
     * @throws IllegalStateException when the lease is held by another
     */
    public static VerdictClient leased(
            LeaseService leases, URI server, String credential, String repoId, String account) {
        var outcome = leases.acquire(Resources.forRef(repoId, "refs/heads/main"), account, Duration.ofHours(1), null);
        if (!(outcome instanceof LeaseService.AcquireOutcome.Acquired acquired)) {
            throw new IllegalStateException("no lease on " + repoId + "'s main branch: " + outcome);
        }
        Grant g = acquired.grant();
        return new VerdictClient(
                server, credential, repoId, account, List.of("fence=" + g.token(), "fence-proof=" + g.proof()));
    }

    /**
     * What the server answered one request: its status line and body.
     *
     * @param accepted the verdict accepted the push (the next request fast-forwards from it)
     * @param refused the server refused the push quickly as the shim treats a store that is down (a 503 when
     *     its queues are full, or a verdict with a non-zero exit)
     */
    public record Answer(boolean accepted, boolean refused, String status, String text) {}

    /** One request: the next fast-forward; fails unless the server accepts it. */
    public void verdict() throws IOException {
        Answer a = attempt();
        if (!a.accepted()) {
            throw new IOException("the server did not accept a verdict request: " + a.status() + " " + a.text());
        }
    }

    /**
     * One request, as {@link #verdict()}, reporting instead of failing on a refusal.
     *
     * @throws IOException on a connection failure, a time-out, or an answer that is neither
     */
    public Answer attempt() throws IOException {
        String next = randomId();
        StringBuilder form = new StringBuilder();
        field(form, "stdin", tip + " " + next + " refs/heads/main\n");
        field(form, "env", "FENCE_REPO_ID=" + repoId);
        field(form, "env", "USER=" + pusher);
        for (String o : pushOptions) {
            field(form, "option", o);
        }
        if (!tip.equals(NO_COMMIT)) {
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
        String reply = exchange(server, head, body);
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

    /**
     * One exchange as a hook makes it: a new connection (2 s to connect, 5 s for each read), the request
     * head and body in one write, as the curl shim writes them (with no delay, two writes would reach the
     * server as two packets, and it would wait for the second), and the whole answer, read until the
     * server closes.
     */
    public static String exchange(URI server, String head, byte[] body) throws IOException {
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] request = Arrays.copyOf(h, h.length + body.length);
        System.arraycopy(body, 0, request, h.length, body.length);
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(server.getHost(), server.getPort()), 2000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(request);
            out.flush();
            // Answers are a few hundred bytes: a small buffer, where readAllBytes takes 8 KB a call, and the
            // clients' garbage is collected in the server's JVM when they share it (the bench's rows).
            InputStream in = s.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream(512);
            byte[] buffer = new byte[1024];
            for (int n; (n = in.read(buffer)) != -1; ) {
                answer.write(buffer, 0, n);
            }
            return answer.toString(StandardCharsets.UTF_8);
        }
    }

    private static void field(StringBuilder form, String name, String value) {
        if (form.length() > 0) {
            form.append('&');
        }
        form.append(name).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
    }

    /** 40 random hex digits: a commit id no repository has. */
    public static String randomId() {
        StringBuilder id = new StringBuilder(40);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < 40; i++) {
            id.append(Character.forDigit(r.nextInt(16), 16));
        }
        return id.toString();
    }
}
