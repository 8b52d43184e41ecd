package dev.fence.server;

import dev.fence.core.FencePolicy;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.hook.HookConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * A new fence serve's verdict path, compiled before hooks pay for it. The JVM runs code it has not compiled
 * yet many times slower: measured on a 2-core virtual machine, a new server answered its first fifty
 * verdicts in 9 to 13 ms each, its first thousand in 2 to 4 ms, and only after about 10,000 in 1 ms; a
 * server whose pushes are sparse spends days in between, and each curl shim push waits for it.
 *
 * <p>{@link #run} sends verdicts as the curl shim sends them ({@link VerdictClient}: a connection each, a
 * token and its proof, a fast-forward) to a server of its own on a free loopback port, over a scratch store
 * and a hook credential that the caller names and removes. Its classes are the real server's (Jetty's
 * request parsing, the hook API, the credential and proof checks, the admission rule, the store's group
 * commit when the scratch store is of the same kind), so the JIT compiles them for both; nothing of the
 * real server is touched: not its listener, store, ledger, credentials, metrics or access log.
 */
public final class Warmup {
    private Warmup() {}

    /**
     * What a warm-up did.
     *
     * @param verdicts verdicts the scratch server answered
     * @param took how long it ran
     * @param stopped it ended early because {@code stop} said so
     */
    public record Outcome(int verdicts, Duration took, boolean stopped) {}

    /**
     * Sends {@code verdicts} verdict requests, from {@code clients} threads, to a server of its own, and closes
     * it.
     *
     * @param scratchStore a store URL that nothing else uses (its contents are the warm-up's)
     * @param credentialsFile a credentials file that nothing else uses; a hook credential is added to it
     * @param openStore opens a store URL, as for the real server
     * @param stop checked between requests: true ends the warm-up early (the real server is stopping)
     * @throws IOException when a request fails (the warm-up stops at the first failure, and throws it once its
     *     server is closed)
     */
    public static Outcome run(
            String scratchStore,
            Path credentialsFile,
            Function<String, LeaseStore> openStore,
            Clock clock,
            int verdicts,
            int clients,
            BooleanSupplier stop)
            throws IOException, InterruptedException {
        if (verdicts < 1 || clients < 1) {
            throw new IllegalArgumentException("a warm-up needs at least one verdict and one client");
        }
        long start = System.nanoTime();
        String credential = CredentialsFile.add(credentialsFile, "warm-up", Role.HOOK, List.of(), new SecureRandom());
        HookConfig config = new HookConfig(
                FencePolicy.defaults(),
                Optional.of(scratchStore),
                Optional.empty(),
                Optional.empty(),
                Optional.empty());
        ServerSettings settings = ServerSettings.of(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), scratchStore, credentialsFile, config);
        AtomicInteger answered = new AtomicInteger();
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (HookServer server = HookServer.start(settings, openStore, clock, line -> {})) {
            List<VerdictClient> branches = new ArrayList<>();
            LeaseStore store = openStore.apply(scratchStore);
            try {
                LeaseService leases = new LeaseService(store, clock);
                for (int i = 0; i < clients; i++) {
                    branches.add(VerdictClient.leased(leases, server.uri(), credential, "warm-up-" + i, "warm-up"));
                }
            } finally {
                store.close();
            }
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                VerdictClient branch = branches.get(i);
                int share = verdicts / clients + (i < verdicts % clients ? 1 : 0);
                Thread t = new Thread(
                        () -> {
                            try {
                                for (int n = 0; n < share && failure.get() == null && !stop.getAsBoolean(); n++) {
                                    branch.verdict();
                                    answered.incrementAndGet();
                                }
                            } catch (IOException | RuntimeException e) {
                                failure.compareAndSet(null, e);
                            }
                        },
                        "fence-warm-up-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
            for (Thread t : threads) {
                t.join();
            }
        }
        if (failure.get() instanceof IOException e) {
            throw e;
        }
        if (failure.get() instanceof RuntimeException e) {
            throw e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        return new Outcome(answered.get(), took, answered.get() < verdicts);
    }
}
