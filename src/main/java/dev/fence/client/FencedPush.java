package dev.fence.client;

import dev.fence.core.ConfigException;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.LeaseService.Status;
import dev.fence.core.LeaseStanding;
import dev.fence.core.ObjectIds;
import dev.fence.core.Reason;
import dev.fence.core.RefNames;
import dev.fence.core.Resources;
import dev.fence.core.Tip;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code fence push}: pushes a branch under the holder's lease, or refuses with FENCED.
 *
 * <ol>
 *   <li>Asks the lease store (or {@code fence serve}) whether the holder holds the branch's resource. If
 *       not: FENCED, and nothing is sent.
 *   <li>Pushes the local branch with the {@code git} binary ({@link GitPush}), carrying {@code fence=<token>} and {@code fence-proof=<proof>}
 *       as push options when the remote takes them (a hooked remote checks them), and always an explicit
 *       expected old id: the SHA the lease recorded at grant (or after the holder's last successful
 *       push), never the clone's remote-tracking ref and never a value the agent gives. A remote without
 *       hooks (github.com) is fenced by that SHA alone.
 *   <li>After a successful push, moves the lease's recorded SHA to the new tip, only if the lease is
 *       still current and still records the old value.
 * </ol>
 *
 * <p>Every transport is git's own: a remote name is pushed to by name, so the clone's remote
 * configuration (push URLs, {@code insteadOf}, proxies, {@code core.sshCommand}) applies, and a local
 * path runs the real {@code git receive-pack}, so its hooks run as they would over ssh.
 */
public final class FencedPush {
    private final LeaseOperations leases;
    private final GitRemotes remotes;
    private final Runnable pauseBeforePush;

    /**
     * What to push.
     *
     * @param cloneDir a directory inside the clone
     * @param remote a remote name of the clone, or a URL
     * @param branch the branch to push (local and remote), or null: the resource's ref, else the current
     *     branch
     * @param resource the resource (must be a git resource), or null to name it by {@code repoId}
     * @param repoId the repo id the remote's hook uses, when {@code resource} is null
     * @param holder the lease holder
     * @param token the grant to push under (its token), or 0 for the holder's current lease
     * @param proof the grant's proof, or null to have the lease port issue it for the holder's current
     *     grant (only a port that authenticated the holder does: {@link LeaseOperations#proof})
     */
    public record Request(
            Path cloneDir,
            String remote,
            String branch,
            String resource,
            String repoId,
            String holder,
            long token,
            String proof) {
        /** A push under the holder's current lease, whatever its token. */
        public Request(Path cloneDir, String remote, String branch, String resource, String repoId, String holder) {
            this(cloneDir, remote, branch, resource, repoId, holder, 0, null);
        }

        /** This push under the grant {@code (holder, token, proof)}. */
        public Request under(String newHolder, long newToken, String newProof) {
            return new Request(cloneDir, remote, branch, resource, repoId, newHolder, newToken, newProof);
        }
    }

    public FencedPush(LeaseOperations leases, GitRemotes remotes) {
        this(leases, remotes, () -> {});
    }

    private FencedPush(LeaseOperations leases, GitRemotes remotes, Runnable pauseBeforePush) {
        this.leases = leases;
        this.remotes = remotes;
        this.pauseBeforePush = pauseBeforePush;
    }

    /**
     * The same push with {@code pause} run between the last lease check (the proof) and the push: for tests that stand in
     * for an agent that stops right there (the window the remote's hook and the expected SHA close).
     */
    public FencedPush pausingBeforePush(Runnable pause) {
        return new FencedPush(leases, remotes, pause);
    }

    /** The resource and refs a request names. */
    record Target(String resource, String ref, Path top) {}

    /**
     * Works out the resource and ref of {@code r}.
     *
     * @throws InvalidInputException when they are missing, inconsistent or not a git branch
     */
    Target target(Request r) {
        Path top = remotes.workTree(r.cloneDir());
        String branchRef = r.branch() == null ? null : RefNames.full(r.branch());
        if (r.resource() != null) {
            Resources.GitRef git = Resources.parse(r.resource())
                    .orElseThrow(() -> new InvalidInputException("fence push needs a git resource"
                            + " (git:<repo-id>:refs/heads/<branch>); '" + r.resource() + "' is not one"));
            if (branchRef != null && !branchRef.equals(git.ref())) {
                throw new InvalidInputException(
                        "--branch " + r.branch() + " is not the branch of resource " + r.resource());
            }
            return new Target(r.resource(), git.ref(), top);
        }
        if (r.repoId() == null) {
            throw new InvalidInputException("name the resource: --resource git:<repo-id>:<ref>, or --repo ID");
        }
        String ref = branchRef != null ? branchRef : remotes.currentBranch(top);
        if (ref == null) {
            throw new InvalidInputException("HEAD is detached in " + top + "; pass --branch BRANCH");
        }
        return new Target(Resources.forRef(r.repoId(), ref), ref, top);
    }

    /**
     * The resource {@code r} pushes to.
     *
     * @throws InvalidInputException when it is missing, inconsistent or not a git branch
     */
    public String resourceOf(Request r) {
        return target(r).resource();
    }

    /**
     * Pushes, or refuses.
     *
     * @throws InvalidInputException for a bad request (no such branch, not a git resource), and without a
     *     proof in direct mode
     * @throws ConfigException when the lease recorded no SHA, or the clone or remote cannot be used
     * @throws dev.fence.core.StoreUnavailableException when the store (or the server) cannot be reached
     */
    public PushOutcome push(Request r) {
        Target t = target(r);
        LeaseStanding standing =
                r.token() == 0 ? leases.standing(t.resource(), r.holder()) : grantStanding(t, r.holder(), r.token());
        if (standing instanceof LeaseStanding.NotHeld lost) {
            return new PushOutcome.Fenced(
                    t.resource(), t.ref(), lost.lastToken(), null, null, false, FencedMessage.lines(lost.fenced()));
        }
        Lease lease = ((LeaseStanding.Holds) standing).lease();
        String expected = lease.grantSha();
        if (expected == null) {
            throw new ConfigException("the lease on " + t.resource() + " (token " + lease.token() + ") recorded no"
                    + " remote SHA, so fence push has no expected old id to push against: acquire the lease with"
                    + " 'fence lease acquire ... --git-remote <remote> --grant-file FILE', FILE holding this lease's grant"
                    + " (the lease is yours: the acquire shows its grant to take it again)");
        }
        GitRemotes.Remote remote = remotes.resolve(t.top(), r.remote());
        String proof = r.proof();
        if (proof == null) {
            // Only a lease port that authenticated the holder (fence serve) issues it; in direct mode, where
            // anyone can name a holder and its token, it refuses (exit 2), so a stale agent cannot push as
            // the holder that fenced it.
            LeaseOperations.ProofOutcome proofOutcome = leases.proof(t.resource(), r.holder(), lease.token());
            if (proofOutcome instanceof LeaseOperations.ProofOutcome.Lost lost) {
                return new PushOutcome.Fenced(
                        t.resource(),
                        t.ref(),
                        lease.token(),
                        expected,
                        null,
                        false,
                        FencedMessage.lines(lost.fenced()));
            }
            proof = ((LeaseOperations.ProofOutcome.Issued) proofOutcome).proof();
        } else {
            // A hookless remote checks no proof: fence checks it here, or anyone who read the holder's name
            // and token in a FENCED message could push over the holder's recorded SHA.
            Fenced badProof = leases.checkProof(t.resource(), r.holder(), lease.token(), proof);
            if (badProof != null) {
                return new PushOutcome.Fenced(
                        t.resource(), t.ref(), lease.token(), expected, null, false, FencedMessage.lines(badProof));
            }
        }
        pauseBeforePush.run();
        String newSha = remotes.localTip(t.top(), t.ref());
        if (newSha == null) {
            throw new InvalidInputException("no local branch " + t.ref() + " in " + t.top());
        }
        List<String> options = List.of("fence=" + lease.token(), "fence-proof=" + proof);
        GitPush.Result a = GitPush.push(
                remotes.git(),
                t.top(),
                remote.name() != null ? remote.name() : remote.url(),
                t.ref(),
                newSha,
                expected,
                options,
                () -> hooked(t));
        return outcome(r, t, remote, lease, proof, newSha, a);
    }

    /**
     * Whether the grant {@code (holder, token)} is the resource's current lease: a grant the holder has
     * since replaced with a newer one of its own is as stale as one a successor superseded.
     */
    private LeaseStanding grantStanding(Target t, String holder, long token) {
        Status status = leases.status(t.resource());
        LeaseStanding standing = LeaseStanding.of(status.state(), holder, token, status.floor());
        if (standing instanceof LeaseStanding.Holds h && h.lease().token() != token) {
            Fenced f = new Fenced(
                    t.resource(),
                    t.ref(),
                    token,
                    status.state().latestGranted(),
                    Reason.SUPERSEDED,
                    holder,
                    status.state().tip(),
                    "token " + token + " is an older grant; " + holder + "'s lease on " + t.resource()
                            + " now has token " + h.lease().token());
            return new LeaseStanding.NotHeld(t.resource(), token, f);
        }
        return standing;
    }

    /**
     * True when fence's hook is known to guard {@code t}'s ref at its remote: the store holds a write to it
     * that a hook admitted (only a hook or {@code fence serve} records one; a hookless remote never does).
     */
    private boolean hooked(Target t) {
        return leases.status(t.resource()).state().tip() != null;
    }

    private PushOutcome outcome(
            Request r, Target t, GitRemotes.Remote remote, Lease lease, String proof, String newSha, GitPush.Result a) {
        String expected = lease.grantSha();
        if (a.landed()) {
            return pushed(r, t, lease, proof, newSha, a);
        }
        // Not landed at every push URL: whatever happened, the recorded SHA stays where it is.
        GitPush.RefStatus u = a.rejection();
        if (u != null && "REJECTED_REMOTE_CHANGED".equals(u.status())) {
            return remoteChanged(r, t, remote, lease, newSha);
        }
        List<String> fenced = fencedLines(a.remoteLines());
        if (!fenced.isEmpty()) {
            return new PushOutcome.Fenced(t.resource(), t.ref(), lease.token(), expected, newSha, true, fenced);
        }
        List<String> lines = new ArrayList<>(a.remoteLines());
        String status;
        if (u != null) {
            status = u.status();
            for (GitPush.Block b : a.blocks()) {
                if (b.ref() != null && !b.ref().landed()) {
                    lines.add("fence push: " + t.ref() + " was rejected by " + b.url() + " ("
                            + b.ref().summary()
                            + (b.ref().reason() == null ? "" : ": " + b.ref().reason()) + ")");
                }
            }
        } else {
            status = "TRANSPORT_ERROR";
            String where = a.urls().size() == 1
                    ? remote.url()
                    : a.blocks().size() < a.urls().size()
                            ? a.urls().get(a.blocks().size()) + " (push URL "
                                    + (a.blocks().size() + 1) + " of "
                                    + a.urls().size() + ")"
                            : "one of the " + a.urls().size() + " push URLs of " + remote.url();
            lines.add("fence push: cannot push to " + where + " (git push exit " + a.exit() + "):");
            lines.addAll(GitPush.gitLines(a.stderr()));
            if (a.refusedOptions() && a.urls().size() > 1) {
                lines.add("fence push: that push URL takes no push options, so it runs no fence hook; with"
                        + " several push URLs fence push sends the token to all or none and will not drop it:"
                        + " push to each URL as a remote of its own");
            } else if (a.refusedOptions()) {
                lines.add("fence push: fence's hook has admitted pushes to " + t.ref() + " there, but the remote"
                        + " takes no push options now, so the token cannot reach it; pushed without it, the hook"
                        + " would judge this a tokenless push (and one that supersedes leases would supersede"
                        + " yours). Nothing was pushed. Its administrator turns them back on with: git config"
                        + " receive.advertisePushOptions true ('fence doctor' checks it)");
            }
        }
        List<String> partly = a.landedAt();
        if (!partly.isEmpty()) {
            lines.add("fence push: " + t.ref() + " landed only at " + String.join(", ", partly) + ", not at every"
                    + " push URL; the push did not land and the lease's recorded SHA "
                    + ObjectIds.abbreviate(expected) + " was not moved");
        }
        return new PushOutcome.Rejected(t.resource(), t.ref(), lease.token(), expected, newSha, status, lines);
    }

    private PushOutcome pushed(Request r, Target t, Lease lease, String proof, String newSha, GitPush.Result a) {
        List<String> lines = new ArrayList<>(a.remoteLines());
        boolean moved = true;
        if (!newSha.equals(lease.grantSha())) {
            CheckOutcome c =
                    leases.moveGrantSha(t.resource(), r.holder(), lease.token(), proof, lease.grantSha(), newSha);
            if (c instanceof CheckOutcome.Lost lost) {
                moved = false;
                lines.add("warning: the push landed, but the lease was lost right after it; its recorded SHA"
                        + " was not moved:");
                lines.addAll(FencedMessage.lines(lost.fenced()));
            }
        }
        if (!a.withOptions()) {
            lines.add("note: " + t.ref() + "'s remote takes no push options (no fence hook); the expected old id "
                    + ObjectIds.abbreviate(lease.grantSha()) + " fenced this push");
        }
        return new PushOutcome.Pushed(
                t.resource(),
                t.ref(),
                lease.token(),
                lease.grantSha(),
                newSha,
                a.blocks().stream().allMatch(b -> b.ref().flag() == '='),
                a.withOptions(),
                moved,
                lines);
    }

    private PushOutcome remoteChanged(Request r, Target t, GitRemotes.Remote remote, Lease lease, String newSha) {
        String actual;
        try {
            actual = remotes.tip(t.top(), remote, t.ref());
        } catch (ConfigException e) {
            actual = null;
        }
        Status status = leases.status(t.resource());
        Lease current = status.state().lease();
        String currentHolder =
                current != null && current.token() == status.state().latestGranted() ? current.holder() : null;
        Tip tip = status.state().tip();
        if (tip != null && !tip.sha().equals(actual)) {
            tip = null;
        }
        String where = actual == null
                ? "has moved"
                : ObjectIds.isZero(actual) ? "is gone" : "is at " + ObjectIds.abbreviate(actual);
        String detail = "the remote's " + t.ref() + " " + where + ", but your lease"
                + " recorded "
                + (ObjectIds.isZero(lease.grantSha()) ? "no branch" : ObjectIds.abbreviate(lease.grantSha()))
                + ": someone else wrote there since (nothing was pushed)";
        Fenced f = new Fenced(
                t.resource(),
                t.ref(),
                lease.token(),
                status.state().latestGranted(),
                Reason.REMOTE_CHANGED,
                currentHolder,
                tip,
                detail);
        return new PushOutcome.Fenced(
                t.resource(), t.ref(), lease.token(), lease.grantSha(), newSha, true, FencedMessage.lines(f));
    }

    /** The remote's message lines in git's {@code stderr}, without transport prefixes. */
    static List<String> remoteLines(String stderr) {
        return GitPush.remoteLines(stderr);
    }

    /** The remote's FENCED message: from its first {@code FENCED } line on; empty when there is none. */
    static List<String> fencedLines(List<String> remoteLines) {
        for (int i = 0; i < remoteLines.size(); i++) {
            if (remoteLines.get(i).startsWith("FENCED ")) {
                return List.copyOf(remoteLines.subList(i, remoteLines.size()));
            }
        }
        return List.of();
    }
}
