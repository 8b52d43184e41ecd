package dev.fence.bench;

import dev.fence.core.Actor;
import dev.fence.core.AdmissionService;
import dev.fence.core.FencePolicy;
import dev.fence.core.Grant;
import dev.fence.core.HostKind;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.PushAttempt;
import dev.fence.core.PushOptions;
import dev.fence.core.RefUpdate;
import dev.fence.core.Resources;
import dev.fence.core.Verdict;
import dev.fence.server.VerdictClient;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The hot paths of one store as a long-running process (fence serve) takes them: a hook verdict (one
 * fast-forward of a leased branch, judged, committed and recorded by {@link AdmissionService}) and a lease
 * acquire ({@link LeaseService}), each timed from call to return.
 */
final class StoreProbe implements AutoCloseable {
    static final String REPO = "scale-probe";
    private static final String ZERO = "0".repeat(40);
    private static final int ACQUIRED_NAMES = 1000;

    final LeaseStore store;
    private final AdmissionService admission;
    private final LeaseService leases;
    private final PushOptions options;
    private String tip = ZERO;

    StoreProbe(LeaseStore store) {
        this.store = store;
        Clock clock = Clock.systemUTC();
        this.admission = new AdmissionService(store, FencePolicy.defaults(), clock);
        // As fence serve's service, which authenticates its holders: the probe's acquires take one holder's
        // leases again and again, which a direct-mode acquire may do only by showing each grant.
        this.leases = LeaseService.forAuthenticatedHolders(store, clock);
        var outcome = leases.acquire(Resources.forRef(REPO, "refs/heads/main"), "bench", Duration.ofHours(6), null);
        Grant g = ((LeaseService.AcquireOutcome.Acquired) outcome).grant();
        this.options = new PushOptions(
                OptionalLong.of(g.token()), g.proof(), List.of("fence=" + g.token(), "fence-proof=" + g.proof()));
    }

    /** One verdict: the next fast-forward of the leased branch; its time in ms. */
    double verdict() throws IOException {
        String next = VerdictClient.randomId();
        PushAttempt push = new PushAttempt(
                REPO,
                new Actor("bench", HostKind.PLAIN, null),
                options,
                List.of(new RefUpdate(tip, next, "refs/heads/main")));
        long start = System.nanoTime();
        Verdict v = admission.admit(push, (a, d) -> true);
        long nanos = System.nanoTime() - start;
        if (!v.accepted()) {
            throw new IOException("the probe's fast-forward was refused: " + v.refusals());
        }
        tip = next;
        return nanos / 1e6;
    }

    /** One acquire of one of a thousand resources of the probe (a re-grant to the same holder); its time in ms. */
    double acquire() throws IOException {
        String resource = Resources.forRef(
                REPO, "refs/heads/acquired-" + ThreadLocalRandom.current().nextInt(ACQUIRED_NAMES));
        long start = System.nanoTime();
        var outcome = leases.acquire(resource, "bench-acquirer", Duration.ofMinutes(5), null);
        long nanos = System.nanoTime() - start;
        if (!(outcome instanceof LeaseService.AcquireOutcome.Acquired)) {
            throw new IOException("the probe's acquire was refused: " + outcome);
        }
        return nanos / 1e6;
    }

    /**
     * One push of {@code fenced} new branches and {@code tags} new tags (outside the fenced patterns) by a
     * pusher without a token (the bump policy: every branch is judged, counted and recorded); the time of
     * the whole admission in ms.
     */
    double push(String prefix, int fenced, int tags) throws IOException {
        String sha = VerdictClient.randomId();
        List<RefUpdate> updates = new ArrayList<>(fenced + tags);
        for (int i = 0; i < tags; i++) {
            updates.add(new RefUpdate(ZERO, sha, "refs/tags/" + prefix + "-t" + i));
        }
        for (int i = 0; i < fenced; i++) {
            updates.add(new RefUpdate(ZERO, sha, "refs/heads/" + prefix + "-b" + i));
        }
        PushAttempt push = new PushAttempt(REPO, new Actor("bench", HostKind.PLAIN, null), PushOptions.none(), updates);
        long start = System.nanoTime();
        Verdict v = admission.admit(push, (a, d) -> true);
        long nanos = System.nanoTime() - start;
        if (!v.accepted()) {
            throw new IOException("the probe's push of " + fenced + " branches was refused: " + v.refusals());
        }
        return nanos / 1e6;
    }

    @Override
    public void close() {
        store.close();
    }
}
