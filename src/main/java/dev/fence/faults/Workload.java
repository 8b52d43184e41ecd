package dev.fence.faults;

import dev.fence.core.Grant;
import dev.fence.core.HeldGrant;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.Resources;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The clients of a fault run: threads in this process, each a long-running holder with its own store
 * connection, its own {@link LeaseService} and its own {@link Clock}, working as a harness in direct mode
 * does. A cycle: acquire a branch's lease, commit on the fetched tip, push with the grant's token and
 * proof through the real {@code git} and the installed hook, perhaps wake stale grants (below), release;
 * then a few lease-only acquire/release cycles on plain resources.
 *
 * <p><b>Stale grants.</b> Every grant whose holder wrote a commit is kept as a paused agent would keep it:
 * the token, the proof and that commit. After an accepted push, the pushing client wakes, while it still
 * holds its lease, (a) every other grant of the same token number on the resource, its own holder's
 * included (only a store that repeated a token has one), (b) sometimes the latest earlier grant of another
 * holder (the incident: a holder superseded while paused), and (c) sometimes its own holder's latest
 * earlier grant (the incident again, where each new agent session of a project reuses one holder name: the
 * earlier session wakes). A woken grant makes one new commit on its own commit and force-pushes it under
 * its old token and proof, as that holder. Every one of them is superseded by the pusher's live grant, so
 * every one must be refused.
 *
 * <p>Thread-safe: the orchestrator calls {@link #switchStore}, {@link #pause}, {@link #resume} and {@link
 * #stop} while the clients run.
 */
final class Workload {
    /**
     * How the clients work.
     *
     * @param ttl lease length
     * @param leaseOnlyCycles lease-only cycles after each git cycle
     * @param wakeChance chance, after an accepted push, of waking the latest earlier grant of another holder,
     *     and again of waking the pusher's own latest earlier grant
     */
    record Settings(Duration ttl, int leaseOnlyCycles, double wakeChance) {
        static Settings defaults() {
            return new Settings(Duration.ofSeconds(10), 8, 0.3);
        }
    }

    /** A grant kept by its holder after it wrote a commit under it; the proof never leaves this process. */
    private static final class StaleGrant {
        final String resource;
        final String branch;
        final String holder;
        final long token;
        final String proof;
        final String commit;
        int woken;

        StaleGrant(String resource, String branch, String holder, long token, String proof, String commit) {
            this.resource = resource;
            this.branch = branch;
            this.holder = holder;
            this.token = token;
            this.proof = proof;
            this.commit = commit;
        }
    }

    private static final int KEPT_PER_RESOURCE = 256;
    private static final int MAX_WAKES = 2;

    private final GitRepo repo;
    private final History history;
    private final Settings settings;
    private final List<Client> clients = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final Map<String, Deque<StaleGrant>> stale = new HashMap<>();
    private final Gate gate = new Gate();
    private final AtomicInteger errors = new AtomicInteger();
    private final Map<String, AtomicInteger> errorKinds = new ConcurrentHashMap<>();
    private final AtomicInteger busy = new AtomicInteger();
    private final AtomicInteger wokenOwn = new AtomicInteger();
    private final AtomicInteger wokenOther = new AtomicInteger();
    private final AtomicInteger wokenRepeated = new AtomicInteger();
    private volatile String storeUrl;
    private volatile boolean stopping;

    /**
     * @param clocks one per client: client {@code i} is holder {@code agent-<i+1>} and reads {@code clocks[i]}
     * @param seed for the clients' choices
     */
    Workload(GitRepo repo, History history, String storeUrl, List<Clock> clocks, Settings settings, long seed) {
        this.repo = repo;
        this.history = history;
        this.storeUrl = storeUrl;
        this.settings = settings;
        for (int i = 0; i < clocks.size(); i++) {
            String holder = "agent-" + (i + 1);
            clients.add(new Client(holder, clocks.get(i), repo.clone(holder), new Random(seed + i)));
        }
    }

    void start() {
        for (Client c : clients) {
            Thread t = new Thread(c, "fence-faults-" + c.holder);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    /** Clients use {@code url} from their next operation on (as after a failover). */
    void switchStore(String url) {
        storeUrl = url;
    }

    /**
     * Stops the clients at their next cycle boundary (no lease held) and waits for all to be parked.
     *
     * @return false when some had not parked within {@code timeout} (they then park when they get there)
     */
    boolean pause(Duration timeout) {
        return gate.pause(aliveClients(), timeout);
    }

    void resume() {
        gate.resume();
    }

    /** Client {@code i}'s lease service (call only while the clients are paused). */
    LeaseService service(int i) {
        return clients.get(i).service();
    }

    /**
     * Asks every client to finish its cycle and waits for them, at most {@code timeout}.
     *
     * @return the clients that had not finished
     */
    int stop(Duration timeout) {
        stopping = true;
        gate.resume();
        long deadline = System.nanoTime() + timeout.toNanos();
        int left = 0;
        for (Thread t : threads) {
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                t.interrupt();
                left++;
            }
        }
        for (Client c : clients) {
            if (!threadOf(c).isAlive()) {
                c.closeStore();
            }
        }
        return left;
    }

    int errors() {
        return errors.get();
    }

    int busy() {
        return busy.get();
    }

    /** The stale force-pushes tried so far, by whose grant was woken. */
    String wakes() {
        return wokenOwn.get() + " of the pusher's own holder's earlier grant, " + wokenOther.get()
                + " of another holder's, " + wokenRepeated.get() + " of a repeated token number";
    }

    /** The most frequent error messages, most frequent first, with counts. */
    Map<String, Integer> errorKinds(int max) {
        List<Map.Entry<String, AtomicInteger>> all = new ArrayList<>(errorKinds.entrySet());
        all.sort((a, b) -> Integer.compare(b.getValue().get(), a.getValue().get()));
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Map.Entry<String, AtomicInteger> e : all.subList(0, Math.min(max, all.size()))) {
            out.put(e.getKey(), e.getValue().get());
        }
        return out;
    }

    private Thread threadOf(Client c) {
        return threads.get(clients.indexOf(c));
    }

    private int aliveClients() {
        int n = 0;
        for (Thread t : threads) {
            if (t.isAlive()) {
                n++;
            }
        }
        return n;
    }

    private void keep(StaleGrant g) {
        synchronized (stale) {
            Deque<StaleGrant> d = stale.computeIfAbsent(g.resource, k -> new ArrayDeque<>());
            d.addLast(g);
            if (d.size() > KEPT_PER_RESOURCE) {
                d.removeFirst();
            }
        }
    }

    /**
     * The grants to wake after the accepted push under {@code current}, each woken at most {@link
     * #MAX_WAKES} times: every other grant of the same token number on the resource (the holder's own
     * included), and sometimes the latest earlier grant of another holder and the latest earlier grant of
     * the same holder (an earlier agent session under the same holder name).
     */
    private List<StaleGrant> toWake(StaleGrant current, Random random) {
        List<StaleGrant> out = new ArrayList<>();
        synchronized (stale) {
            Deque<StaleGrant> d = stale.getOrDefault(current.resource, new ArrayDeque<>());
            StaleGrant latestOther = null;
            StaleGrant latestOwn = null;
            boolean before = false;
            for (Iterator<StaleGrant> it = d.descendingIterator(); it.hasNext(); ) {
                StaleGrant g = it.next();
                if (g == current) {
                    before = true;
                    continue;
                }
                if (g.woken >= MAX_WAKES) {
                    continue;
                }
                if (g.token == current.token) {
                    out.add(g);
                } else if (!before) {
                    // Kept after the current grant: only a lease that lapsed lets that happen, and such a
                    // grant may be newer than the current one, so waking it would prove nothing.
                    continue;
                } else if (g.holder.equals(current.holder)) {
                    if (latestOwn == null) {
                        latestOwn = g;
                    }
                } else if (latestOther == null) {
                    latestOther = g;
                }
            }
            if (latestOther != null && random.nextDouble() < settings.wakeChance()) {
                out.add(latestOther);
            }
            if (latestOwn != null && random.nextDouble() < settings.wakeChance()) {
                out.add(latestOwn);
            }
            if (out.size() > MAX_WAKES + 2) {
                out = new ArrayList<>(out.subList(0, MAX_WAKES + 2));
            }
            out.forEach(g -> g.woken++);
        }
        return out;
    }

    private void error(RuntimeException e) {
        errors.incrementAndGet();
        String m = String.valueOf(e.getMessage());
        m = e.getClass().getSimpleName() + ": " + (m.length() > 160 ? m.substring(0, 160) + "..." : m);
        errorKinds.computeIfAbsent(m, k -> new AtomicInteger()).incrementAndGet();
    }

    static String sha256(String proof) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(proof.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** Pauses clients between cycles. */
    private final class Gate {
        private boolean paused;
        private int parked;

        synchronized void park() {
            if (!paused) {
                return;
            }
            parked++;
            notifyAll();
            try {
                while (paused && !stopping) {
                    wait(100);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                parked--;
                notifyAll();
            }
        }

        synchronized boolean pause(int clients, Duration timeout) {
            paused = true;
            long deadline = System.nanoTime() + timeout.toNanos();
            while (parked < clients) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    return false;
                }
                try {
                    wait(Math.min(left, 100));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }

        synchronized void resume() {
            paused = false;
            notifyAll();
        }
    }

    /** One holder. */
    private final class Client implements Runnable {
        final String holder;
        final Clock clock;
        final GitRepo.Clone clone;
        final Random random;
        private LeaseStore store;
        private String openedUrl;
        private LeaseService service;
        /**
         * The last grant this holder took on each resource: shown at its next acquire, as a real client shows
         * its grant file, so that a lease a failed release left live is taken again at once, not after its TTL.
         */
        private final Map<String, Grant> lastGrants = new HashMap<>();

        Client(String holder, Clock clock, GitRepo.Clone clone, Random random) {
            this.holder = holder;
            this.clock = clock;
            this.clone = clone;
            this.random = random;
        }

        synchronized LeaseService service() {
            String url = storeUrl;
            if (!url.equals(openedUrl)) {
                closeStore();
                store = Stores.open(url, StoreOptions.defaults());
                service = new LeaseService(store, clock);
                openedUrl = url;
            }
            return service;
        }

        synchronized void closeStore() {
            if (store != null) {
                store.close();
                store = null;
                openedUrl = null;
            }
        }

        @Override
        public void run() {
            try {
                while (!stopping && !Thread.currentThread().isInterrupted()) {
                    gate.park();
                    if (stopping) {
                        break;
                    }
                    try {
                        gitCycle();
                    } catch (RuntimeException e) {
                        error(e);
                        RedisNode.sleep(50);
                    }
                    for (int i = 0; i < settings.leaseOnlyCycles() && !stopping; i++) {
                        try {
                            leaseCycle();
                        } catch (RuntimeException e) {
                            error(e);
                            RedisNode.sleep(50);
                        }
                    }
                }
            } finally {
                closeStore();
            }
        }

        private Grant acquire(String resource) {
            long invoked = System.nanoTime();
            Grant last = lastGrants.get(resource);
            LeaseService.AcquireOutcome o =
                    service().acquire(resource, holder, settings.ttl(), null, last == null ? null : HeldGrant.of(last));
            long acked = System.nanoTime();
            if (o instanceof LeaseService.AcquireOutcome.Acquired a) {
                Grant g = a.grant();
                lastGrants.put(resource, g);
                history.grant(new History.Grant(
                        resource, holder, g.token(), g.generation(), sha256(g.proof()), invoked, acked));
                return g;
            }
            busy.incrementAndGet();
            RedisNode.sleep(2 + random.nextInt(10));
            return null;
        }

        private void release(Grant g) {
            try {
                service().release(g.resource(), holder, g.token(), g.proof());
            } catch (RuntimeException e) {
                error(e);
            }
        }

        private void leaseCycle() {
            Grant g = acquire(
                    "faults-lease-" + random.nextInt(Math.max(1, repo.branches().size())));
            if (g != null) {
                release(g);
            }
        }

        private void gitCycle() {
            List<String> branches = repo.branches();
            String branch = branches.get(random.nextInt(branches.size()));
            String ref = "refs/heads/" + branch;
            String resource = Resources.forRef(GitRepo.REPO_ID, ref);
            Grant g = acquire(resource);
            if (g == null) {
                return;
            }
            try {
                clone.fetch();
                String commit = clone.commitOn(clone.fetched(branch), holder + " under token " + g.token());
                StaleGrant kept = new StaleGrant(resource, branch, holder, g.token(), g.proof(), commit);
                keep(kept);
                if (push(ref, branch, holder, g.token(), g.proof(), commit, false)) {
                    for (StaleGrant s : toWake(kept, random)) {
                        if (clone.has(s.commit)) {
                            (s.token == g.token() ? wokenRepeated : s.holder.equals(holder) ? wokenOwn : wokenOther)
                                    .incrementAndGet();
                            String c = clone.commitOn(s.commit, s.holder + " (woken) under token " + s.token);
                            push(ref, s.branch, s.holder, s.token, s.proof, c, true);
                        }
                    }
                }
            } finally {
                release(g);
            }
        }

        private boolean push(
                String ref, String branch, String pusher, long token, String proof, String commit, boolean stale) {
            long invoked = System.nanoTime();
            GitRepo.PushResult r = clone.push(commit, branch, token, proof, stale, pusher);
            long acked = System.nanoTime();
            history.push(new History.Push(
                    ref,
                    pusher,
                    token,
                    stale,
                    r.accepted(),
                    r.forced(),
                    r.oldId(),
                    commit,
                    r.reason(),
                    invoked,
                    acked));
            return r.accepted();
        }
    }
}
