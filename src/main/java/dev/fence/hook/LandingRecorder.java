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
        List<Landings.Pending> landed = new ArrayList<>();
        List<Landings.Pending> landedPast = new ArrayList<>();
        List<Landings.Pending> dropped = new ArrayList<>();
        List<PendingLandings.Entry> kept = new ArrayList<>();
        for (PendingLandings.Entry e : entries) {
            RefUpdate u = e.pending().update();
            if (reports(landedNow, u)) {
                // git says so: no need to ask it where the ref is (a process, and on JDK 17 the first
                // lambdas of the JDK's own process code, milliseconds of every push's post-receive).
                landed.add(e.pending());
                continue;
            }
            String tip = tips.get(u.ref());
            if (tip == null) {
                tip = git.tipOf(u.ref());
                tips.put(u.ref(), tip);
            }
            boolean atNew = tip.equals(u.newId()) || (ObjectIds.isZero(tip) && ObjectIds.isZero(u.newId()));
            if (atNew && !u.newId().equals(u.oldId())) {
                landed.add(e.pending());
            } else if (e.pid() == finishedReceiver || !e.inFlight()) {
                if (movedPast(git, u, tip)) {
                    landed.add(e.pending());
                    landedPast.add(e.pending());
                } else {
                    dropped.add(e.pending());
                }
            } else {
                kept.add(e);
            }
        }
        Landings.Landed done =
                Landings.land(store, landed, landedPast, git, clock.instant(), Identities.candidates(clock));
        record.raise(done.marks());
        Landings.unlanded(store, dropped, clock.instant());
        pending.write(kept);
        return done.lines();
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
            if (v.ref().equals(u.ref())
                    && v.oldId().equals(u.oldId())
                    && v.newId().equals(u.newId())) {
                return true;
            }
        }
        return false;
    }
}
