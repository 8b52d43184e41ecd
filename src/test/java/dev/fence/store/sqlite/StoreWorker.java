package dev.fence.store.sqlite;

import dev.fence.core.AcquireResult;
import dev.fence.core.EventType;
import dev.fence.core.Identities;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LedgerEvent;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.StoreIdentity;
import dev.fence.core.Tip;
import dev.fence.store.StoreOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A fence process of its own, started by {@link SqliteLeaseStoreTest} to share one SQLite file with
 * other processes. Prints one line per outcome on stdout; anything unexpected goes to stderr with a
 * non-zero exit.
 *
 * <ul>
 *   <li>{@code rounds <file> <holder> <rounds> <startMillis>}: prints {@code ready}, waits for a line on
 *       stdin, then acquires {@link #RESOURCE} once per round at {@code start + round * 10 s} with a 5 s
 *       lease, printing {@code GRANT <round> <token> <generation>} or {@code BUSY <round> <holder>
 *       <token>}. Leases of earlier rounds have lapsed by the next round, so each round has exactly one
 *       winner however the processes interleave.
 *   <li>{@code burst <file> <seed>}: runs random store operations on a few resources, with pauses of
 *       up to a millisecond, until killed, printing {@code ok} after each.
 * </ul>
 */
public final class StoreWorker {
    static final String RESOURCE = "git:shared:refs/heads/main";
    static final List<String> BURST_RESOURCES = List.of(RESOURCE, "db/migrations", "git:shared:refs/heads/dev");
    static final long ROUND_MILLIS = 10_000;
    static final long LEASE_MILLIS = 5_000;

    private StoreWorker() {}

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "rounds" -> rounds(
                    Path.of(args[1]),
                    args[2],
                    Integer.parseInt(args[3]),
                    Instant.ofEpochMilli(Long.parseLong(args[4])));
            case "burst" -> burst(Path.of(args[1]), Long.parseLong(args[2]));
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    private static StoreOptions options() {
        return new StoreOptions(Duration.ofSeconds(30), Duration.ofDays(90), 0, Duration.ZERO);
    }

    private static void rounds(Path file, String holder, int rounds, Instant start) throws Exception {
        System.out.println("ready");
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        // Opened only now, so that all workers race to create the same new file.
        StoreIdentity candidate = Identities.candidate(start);
        try (SqliteLeaseStore store = SqliteLeaseStore.open(file, options())) {
            for (int r = 0; r < rounds; r++) {
                Instant now = start.plusMillis(r * ROUND_MILLIS);
                AcquireResult result = store.acquire(RESOURCE, holder, LEASE_MILLIS, now, null, candidate);
                if (result instanceof AcquireResult.Granted g) {
                    System.out.println("GRANT " + r + " " + g.token() + " " + g.generation());
                } else if (result instanceof AcquireResult.Busy b) {
                    System.out.println("BUSY " + r + " " + b.holder() + " " + b.token());
                }
            }
        }
    }

    private static void burst(Path file, long seed) throws InterruptedException {
        Random random = new Random(seed);
        String holder = "burst-" + seed;
        StoreIdentity candidate = Identities.candidate(Instant.now());
        Map<String, Long> held = new HashMap<>();
        SqliteLeaseStore store = SqliteLeaseStore.open(file, options());
        for (long n = 0; ; n++) {
            String resource = BURST_RESOURCES.get(random.nextInt(BURST_RESOURCES.size()));
            Instant now = Instant.now();
            Long token = held.get(resource);
            switch (random.nextInt(7)) {
                case 0 -> {
                    if (store.acquire(resource, holder, 50, now, sha(random), candidate)
                            instanceof AcquireResult.Granted g) {
                        held.put(resource, g.token());
                    }
                }
                case 1 -> {
                    if (token != null) {
                        store.renew(resource, holder, token, 50, now);
                    }
                }
                case 2 -> {
                    if (token != null && store.release(resource, holder, token, now) instanceof LeaseCheck.Ok) {
                        held.remove(resource);
                    }
                }
                case 3 -> {
                    ResourceState s = state(store, resource);
                    if (token != null && s.lease() != null) {
                        store.moveGrantSha(resource, holder, token, s.lease().grantSha(), sha(random));
                    }
                }
                case 4 -> { // a tokenless push bumps the counter
                    ResourceState s = state(store, resource);
                    long bumped = s.latestGranted() + 1;
                    store.commit(
                            List.of(new ResourceWrite(
                                    resource,
                                    s.version(),
                                    bumped,
                                    s.highestAccepted(),
                                    true,
                                    bumped,
                                    sha(random),
                                    null,
                                    new Tip(sha(random), 0, null, "pusher", now),
                                    store.identity(candidate).generation())),
                            List.of(LedgerEvent.lease(now, EventType.BUMP, resource, null, bumped)));
                }
                case 5 -> { // a push with the current lease's token is accepted
                    ResourceState s = state(store, resource);
                    if (s.lease() != null) {
                        long t = s.lease().token();
                        store.commit(
                                List.of(new ResourceWrite(
                                        resource,
                                        s.version(),
                                        s.latestGranted(),
                                        Math.max(s.highestAccepted(), t),
                                        false,
                                        t,
                                        s.baseSha(),
                                        sha(random),
                                        new Tip(sha(random), t, s.lease().holder(), "pusher", now),
                                        store.identity(candidate).generation())),
                                List.of(LedgerEvent.lease(
                                        now,
                                        EventType.ACCEPT,
                                        resource,
                                        s.lease().holder(),
                                        t)));
                    }
                }
                default -> store.append(List.of(LedgerEvent.lease(now, EventType.REJECT, resource, holder, n)));
            }
            System.out.println("ok");
            // SQLite's busy handler sleeps and retries, so a process that writes back to back can starve
            // the others for seconds; real fence processes pause between calls.
            Thread.sleep(random.nextInt(2));
        }
    }

    private static ResourceState state(SqliteLeaseStore store, String resource) {
        return store.snapshot(List.of(resource)).get(resource);
    }

    private static String sha(Random random) {
        byte[] b = new byte[20];
        random.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
