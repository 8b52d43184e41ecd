package dev.fence.bench;

import dev.fence.core.EventType;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Seeds the benchmark's private Redis through pipelined commands on one connection: the state hashes a
 * grant leaves ({@code acquire.lua}: counter, holder, token, grantedAt, expiresAt, released, gen, version)
 * and the ledger stream entries an append leaves ({@code lib.lua}'s {@code ledger_append}: an id above the
 * stream's last and never below the event's time, the fields seq, at, type, resource, repo, ref, holder,
 * token), added to the resource's and the repo's ledger index ({@code index_event}), with the sequence
 * counter moved past them. Only the bench's own server is ever seeded.
 */
final class RedisSeeder implements Seeder {
    private static final int PIPELINE = 2_000;

    // The store's key names (RedisKeys): the seeder writes what the store would find.
    private static final String LEDGER = "fence:ledger";
    private static final String LEDGER_SEQ = "fence:ledger:seq";

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private int pending;

    RedisSeeder(int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        socket.setSoTimeout(60_000);
        out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
        in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
    }

    // As RedisKeys names them.
    static String stateKey(String resource) {
        return "fence:{" + resource + "}:state";
    }

    private static String resourceIndex(String resource) {
        return "fence:{" + resource + "}:events";
    }

    private static String repoIndex(String repo) {
        return "fence:repo:{" + repo + "}:events";
    }

    @Override
    public void leases(long from, long to, String generation, long floor, long nowMillis) throws IOException {
        String token = Long.toString(floor + 1);
        for (long k = from; k < to; k++) {
            send(List.of(
                    "HSET",
                    stateKey(Seeded.resource(k)),
                    "counter",
                    token,
                    "holder",
                    Seeded.holder(k),
                    "token",
                    token,
                    "grantedAt",
                    Long.toString(nowMillis),
                    "expiresAt",
                    Long.toString(nowMillis + Seeded.LEASE_MILLIS),
                    "released",
                    "0",
                    "gen",
                    generation,
                    "version",
                    "1"));
        }
        flush();
    }

    @Override
    public void events(long from, long to, long t0Millis) throws IOException {
        flush();
        long last = lastIdMillis();
        long seq = Math.max(number(List.of("GET", LEDGER_SEQ)), 0);
        for (long j = from; j < to; j++) {
            long k = Seeded.leaseOfEvent(j);
            long at = t0Millis + j;
            boolean grant = j % 2 == 0;
            // Explicit ids, so that the indexes can name them: increasing with j, above the stream's last.
            String id = Math.max(at, last + 1) + "-" + j;
            String s = Long.toString(++seq);
            List<String> cmd = new ArrayList<>(List.of(
                    "XADD",
                    LEDGER,
                    id,
                    "seq",
                    s,
                    "at",
                    Long.toString(at),
                    "type",
                    (grant ? EventType.GRANT : EventType.ACCEPT).name(),
                    "resource",
                    Seeded.resource(k),
                    "repo",
                    Seeded.repo(k),
                    "ref",
                    Seeded.ref(k),
                    "holder",
                    Seeded.holder(k)));
            if (!grant) {
                cmd.addAll(List.of("pusher", Seeded.holder(k)));
            }
            cmd.addAll(List.of("token", Long.toString(j + 1)));
            send(cmd);
            send(List.of("ZADD", resourceIndex(Seeded.resource(k)), s, id));
            send(List.of("ZADD", repoIndex(Seeded.repo(k)), s, id));
        }
        // A store whose first events are seeded indexes its ledger from the first one, as its own append would.
        send(List.of("HSETNX", "fence:meta", "indexedFrom", "1"));
        send(List.of("SET", LEDGER_SEQ, Long.toString(seq)));
        flush();
    }

    /** Nothing: Redis keeps no upkeep for later (its expiry and persistence run as they would anyway). */
    @Override
    public void settle() {}

    @Override
    public long events() throws IOException {
        flush();
        return number(List.of("XLEN", LEDGER));
    }

    /** The millisecond part of the stream's last id, or 0. */
    private long lastIdMillis() throws IOException {
        write(List.of("XREVRANGE", LEDGER, "+", "-", "COUNT", "1"));
        out.flush();
        List<Object> reply = asList(read());
        if (reply.isEmpty()) {
            return 0;
        }
        String id = (String) asList(reply.get(0)).get(0);
        return Long.parseLong(id.substring(0, id.indexOf('-')));
    }

    private long number(List<String> cmd) throws IOException {
        write(cmd);
        out.flush();
        Object r = read();
        return r == null ? -1 : Long.parseLong(r.toString());
    }

    private void send(List<String> cmd) throws IOException {
        write(cmd);
        if (++pending == PIPELINE) {
            flush();
        }
    }

    private void flush() throws IOException {
        out.flush();
        for (; pending > 0; pending--) {
            read();
        }
    }

    private void write(List<String> cmd) throws IOException {
        StringBuilder b = new StringBuilder();
        b.append('*').append(cmd.size()).append("\r\n");
        for (String a : cmd) {
            byte[] bytes = a.getBytes(StandardCharsets.UTF_8);
            b.append('$').append(bytes.length).append("\r\n").append(a).append("\r\n");
        }
        out.write(b.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** One RESP2 reply: a String, a Long, a List or null; an error reply throws. */
    private Object read() throws IOException {
        int type = in.read();
        String line = line();
        switch (type) {
            case '+':
                return line;
            case ':':
                return Long.parseLong(line);
            case '-':
                throw new IOException("redis: " + line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] data = in.readNBytes(n + 2);
                return new String(data, 0, n, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read());
                }
                return items;
            }
            default:
                throw new IOException("unexpected reply from redis: " + (char) type + line);
        }
    }

    private String line() throws IOException {
        StringBuilder b = new StringBuilder();
        for (int c = in.read(); c != '\r'; c = in.read()) {
            if (c < 0) {
                throw new IOException("redis closed the connection");
            }
            b.append((char) c);
        }
        in.read();
        return b.toString();
    }

    @SuppressWarnings("unchecked")
    private static List<Object> asList(Object o) {
        return o == null ? List.of() : (List<Object>) o;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // best effort
        }
    }
}
