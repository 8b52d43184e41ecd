package dev.fence.hook;

import dev.fence.core.HostKind;
import dev.fence.core.Identities;
import dev.fence.core.Landings;
import dev.fence.core.LeaseStore;
import dev.fence.core.ObjectIds;
import dev.fence.core.RefUpdate;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Settles the repository's pending landings ({@link PendingLandings}) against its refs, under the lock of
 * its record ({@link HostRecord}): an update whose ref is at its new id, or has moved on past it, landed
 * ({@link Landings#land}); one whose receiving process is gone, or has finished its updates, with the ref elsewhere did not
 * ({@link Landings#unlanded}); the rest are still in flight and stay. Run by the post-receive hook with
 * the updates git reports as done, and by the pre-receive hook before it judges a push, so that a push
 * is never judged against a state that misses an update that landed (a post-receive that did not run,
 * or ran out of time, is caught up then).
 */
final class LandingRecorder {
    private LandingRecorder() {}

    /**
     * True when the hooks of the repository at {@code gitDir} apply landings ({@link Landings}): plain git
     * or Gitea, with fence's post-receive installed ({@link HookConfig#RECORD_LANDED_KEY} is true).
     * Elsewhere (GitLab, GHES, a shim's server, a repository without fence's post-receive) a decision
     * takes effect when it is made.
     */
    static boolean applies(HostKind host, Path gitDir) {
        if (gitDir == null || (host != HostKind.PLAIN && host != HostKind.GITEA)) {
            return false;
        }
        int dot = HookConfig.RECORD_LANDED_KEY.indexOf('.');
        // No lambda on the hook's path (see ProcessTable).
        java.util.Optional<String> value = GitConfigFile.get(
                gitDir.toAbsolutePath().resolve("config"),
                HookConfig.RECORD_LANDED_KEY.substring(0, dot),
                HookConfig.RECORD_LANDED_KEY.substring(dot + 1));
        return value.isPresent() && value.get().equalsIgnoreCase("true");
    }

    /**
     * Settles what can be settled now.
     *
     * @param landedNow updates git reports as landed (post-receive's input), or empty
     * @param finishedReceiver the {@code receive-pack} whose updates are all done (post-receive's own), or
     *     -1: its entries not among {@code landedNow} and not on their new id did not land
     * @return lines for the pusher (leases a landing superseded)
     */
    static List<String> settle(
            LeaseStore store,
            HostRecord record,
            PendingLandings pending,
            GitAncestry git,
            Clock clock,
            List<RefUpdate> landedNow,
            long finishedReceiver) {
        List<PendingLandings.Entry> entries = pending.read();
        if (entries.isEmpty()) {
            return List.of();
        }
        Map<String, String> tips = new HashMap<>();
        // What each entry says on its own; then, of the entries for one update, at most one lands.
        int n = entries.size();
        byte[] outcome = new byte[n];
        for (int i = 0; i < n; i++) {
            PendingLandings.Entry e = entries.get(i);
            RefUpdate u = e.pending().update();
            boolean own = finishedReceiver != -1 && e.pid() == finishedReceiver;
            if (own && reports(landedNow, u)) {
                // git says so: no need to ask it where the ref is (a process, and on JDK 17 the first
                // lambdas of the JDK's own process code, milliseconds of every push's post-receive).
                outcome[i] = REPORTED;
                continue;
            }
            String tip = tips.get(u.ref());
            if (tip == null) {
                tip = git.tipOf(u.ref());
                tips.put(u.ref(), tip);
            }
            boolean atNew = tip.equals(u.newId()) || (ObjectIds.isZero(tip) && ObjectIds.isZero(u.newId()));
            if (atNew && !u.newId().equals(u.oldId())) {
                // Its own receiver finished without reporting it: another push put the ref there.
                outcome[i] = own ? DOUBTFUL : AT_NEW;
            } else if (own || !e.inFlight()) {
                outcome[i] = movedPast(git, u, tip) ? PAST : DROPPED;
            } else {
                outcome[i] = KEPT;
            }
        }
        onePerUpdate(entries, outcome, finishedReceiver);
        List<Landings.Pending> landed = new ArrayList<>();
        List<Landings.Pending> landedPast = new ArrayList<>();
        List<Landings.Pending> dropped = new ArrayList<>();
        List<PendingLandings.Entry> kept = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            PendingLandings.Entry e = entries.get(i);
            switch (outcome[i]) {
                case REPORTED, AT_NEW, DOUBTFUL -> landed.add(e.pending());
                case PAST -> {
                    landed.add(e.pending());
                    landedPast.add(e.pending());
                }
                case DROPPED -> dropped.add(e.pending());
                default -> kept.add(e);
            }
        }
        Landings.Landed done =
                Landings.land(store, landed, landedPast, git, clock.instant(), Identities.candidates(clock));
        record.raise(done.marks());
        Landings.unlanded(store, dropped, clock.instant());
        pending.write(kept);
        return done.lines();
    }

    private static final byte KEPT = 0;
    private static final byte REPORTED = 1;
    private static final byte AT_NEW = 2;
    private static final byte DOUBTFUL = 3;
    private static final byte PAST = 4;
    private static final byte DROPPED = 5;

    /**
     * Leaves at most one landing per update (ref, old id, new id) among {@code entries}: git moves a ref
     * from one id to another once, and a second push of the same update, admitted while the first was in
     * flight, fails on the ref's changed old id, so crediting both would record a landing (and a superseded
     * lease, and a last write) that never happened. The entry git reported wins; failing that, while any
     * claimant's receiver still runs none is decided yet (its post-receive will say); once all are gone,
     * the first admitted, before one whose own receiver finished without reporting it. The losers did not
     * land.
     */
    private static void onePerUpdate(List<PendingLandings.Entry> entries, byte[] outcome, long finishedReceiver) {
        int n = entries.size();
        // Most updates have one entry: count them first, so a push of many fenced refs is not a scan of all
        // entries per entry.
        Map<String, Integer> perUpdate = new HashMap<>();
        for (PendingLandings.Entry e : entries) {
            String key = key(e.pending().update());
            Integer seen = perUpdate.get(key);
            perUpdate.put(key, seen == null ? 1 : seen + 1);
        }
        for (int i = 0; i < n; i++) {
            if (!landing(outcome[i])) {
                continue;
            }
            RefUpdate u = entries.get(i).pending().update();
            if (perUpdate.get(key(u)) < 2) {
                continue;
            }
            int claimants = 0;
            int reported = -1;
            int first = -1;
            boolean undecided = false;
            for (int j = i; j < n; j++) {
                if (landing(outcome[j]) && same(u, entries.get(j).pending().update())) {
                    claimants++;
                    if (outcome[j] == REPORTED) {
                        reported = j;
                    } else if (outcome[j] != DOUBTFUL) {
                        first = first == -1 ? j : first;
                        undecided |= entries.get(j).pid() != finishedReceiver
                                && entries.get(j).inFlight();
                    }
                }
            }
            if (claimants < 2) {
                continue;
            }
            int winner = reported != -1 ? reported : undecided ? -1 : first;
            for (int j = i; j < n; j++) {
                if (j == winner || !same(u, entries.get(j).pending().update())) {
                    continue;
                }
                // A claimant still in flight waits while no winner is known; any other loser did not
                // land (one still in flight will be refused by git: the ref left its old id).
                outcome[j] = winner == -1 && outcome[j] != DOUBTFUL && landing(outcome[j]) ? KEPT : DROPPED;
            }
        }
    }

    private static String key(RefUpdate u) {
        return u.ref() + '\n' + u.oldId() + '\n' + u.newId();
    }

    private static boolean landing(byte outcome) {
        return outcome == REPORTED || outcome == AT_NEW || outcome == DOUBTFUL || outcome == PAST;
    }

    /**
     * True when the ref, no longer at the update's new id, has moved on past it: the new id is in its
     * history. The update landed and was built on by a push that left no pending entry (a fast-forward
     * accepted while the store was down); counting it as not landed would leave its commits unprotected.
     * Asked only of an entry about to be dropped, so an ordinary landing starts no process for it.
     */
    private static boolean movedPast(GitAncestry git, RefUpdate u, String tip) {
        if (ObjectIds.isZero(u.newId()) || ObjectIds.isZero(tip) || u.newId().equals(u.oldId())) {
            return false;
        }
        try {
            return git.isAncestor(u.newId(), tip);
        } catch (RuntimeException e) {
            // Not decidable now (git failed): leave it to the rule that it did not land, as before.
            return false;
        }
    }

    /**
     * {@code updates.contains(u)}, field by field: a record's own {@code equals} is an invokedynamic call
     * site whose first use links {@code java.lang.invoke} (see {@link ProcessTable}), milliseconds of every
     * post-receive on JDK 17 ({@code LauncherArchiveIT} checks that the path links no lambda).
     */
    private static boolean reports(List<RefUpdate> updates, RefUpdate u) {
        for (RefUpdate v : updates) {
            if (same(v, u)) {
                return true;
            }
        }
        return false;
    }

    private static boolean same(RefUpdate v, RefUpdate u) {
        return v.ref().equals(u.ref())
                && v.oldId().equals(u.oldId())
                && v.newId().equals(u.newId());
    }
}
