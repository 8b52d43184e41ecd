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
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jgit.errors.NotSupportedException;
import org.eclipse.jgit.errors.TransportException;
import org.eclipse.jgit.lib.NullProgressMonitor;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.transport.PushResult;
import org.eclipse.jgit.transport.RemoteRefUpdate;
import org.eclipse.jgit.transport.Transport;
import org.eclipse.jgit.transport.URIish;

/**
 * {@code fence push}: pushes a branch under the holder's lease, or refuses with FENCED.
 *
 * <ol>
 *   <li>Asks the lease store (or {@code fence serve}) whether the holder holds the branch's resource. If
 *       not: FENCED, and nothing is sent.
 *   <li>Pushes the local branch with JGit, carrying {@code fence=<token>} and {@code fence-proof=<proof>}
 *       as push options when the remote takes them (a hooked remote checks them), and always an explicit
 *       expected old id: the SHA the lease recorded at grant (or after the holder's last successful
 *       push), never the clone's remote-tracking ref and never a value the agent gives. A remote without
 *       hooks (github.com) is fenced by that SHA alone.
 *   <li>After a successful push, moves the lease's recorded SHA to the new tip, only if the lease is
 *       still current and still records the old value.
 * </ol>
 *
 * <p>A local remote (a path) is pushed to through the real {@code git receive-pack}, so its hooks run
 * as they would over ssh. JGit's own transports are used for others: https works, ssh needs an SSH
 * implementation on the class path.
 */
public final class FencedPush {
    private static final String PUSH_OPTIONS_NOT_SUPPORTED = "Push options not supported";

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
     */
    public record Request(Path cloneDir, String remote, String branch, String resource, String repoId, String holder) {}

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
     * Pushes, or refuses.
     *
     * @throws InvalidInputException for a bad request (no such branch, not a git resource)
     * @throws ConfigException when the lease recorded no SHA, or the clone or remote cannot be used
     * @throws dev.fence.core.StoreUnavailableException when the store (or the server) cannot be reached
     */
    public PushOutcome push(Request r) {
        Target t = target(r);
        LeaseStanding standing = leases.standing(t.resource(), r.holder());
        if (standing instanceof LeaseStanding.NotHeld lost) {
            return new PushOutcome.Fenced(
                    t.resource(), t.ref(), lost.lastToken(), null, null, false, FencedMessage.lines(lost.fenced()));
        }
        Lease lease = ((LeaseStanding.Holds) standing).lease();
        String expected = lease.grantSha();
        if (expected == null) {
            throw new ConfigException("the lease on " + t.resource() + " (token " + lease.token() + ") recorded no"
                    + " remote SHA, so fence push has no expected old id to push against: acquire the lease with"
                    + " 'fence lease acquire ... --git-remote <remote>'");
        }
        GitRemotes.Remote remote = remotes.resolve(t.top(), r.remote());
        LeaseOperations.ProofOutcome proofOutcome = leases.proof(t.resource(), r.holder(), lease.token());
        if (proofOutcome instanceof LeaseOperations.ProofOutcome.Lost lost) {
            return new PushOutcome.Fenced(
                    t.resource(), t.ref(), lease.token(), expected, null, false, FencedMessage.lines(lost.fenced()));
        }
        String proof = ((LeaseOperations.ProofOutcome.Issued) proofOutcome).proof();
        pauseBeforePush.run();
        try (Repository repo = new FileRepositoryBuilder()
                .setFS(new EnvFs(remotes.env()))
                .findGitDir(t.top().toFile())
                .setMustExist(true)
                .build()) {
            ObjectId local = repo.resolve(t.ref());
            if (local == null) {
                throw new InvalidInputException("no local branch " + t.ref() + " in " + t.top());
            }
            String newSha = local.name();
            List<String> options = List.of("fence=" + lease.token(), "fence-proof=" + proof);
            Attempt a;
            try {
                a = send(repo, remote, t, local, expected, options);
            } catch (TransportException e) {
                if (e.getMessage() == null || !e.getMessage().contains(PUSH_OPTIONS_NOT_SUPPORTED)) {
                    throw e;
                }
                // A remote without push options has no fence hook; the expected old id still fences it.
                a = send(repo, remote, t, local, expected, null);
            }
            return outcome(r, t, remote, lease, newSha, a);
        } catch (NotSupportedException | TransportException e) {
            return new PushOutcome.Rejected(
                    t.resource(),
                    t.ref(),
                    lease.token(),
                    expected,
                    null,
                    "TRANSPORT_ERROR",
                    List.of("fence push: cannot push to " + remote.url() + ": " + e.getMessage()));
        } catch (IOException e) {
            throw new ConfigException("cannot open the clone at " + t.top() + ": " + e.getMessage(), e);
        }
    }

    private record Attempt(RemoteRefUpdate update, PushResult result, boolean withOptions) {}

    private Attempt send(
            Repository repo, GitRemotes.Remote remote, Target t, ObjectId local, String expected, List<String> options)
            throws IOException {
        URIish uri;
        try {
            uri = new URIish(remote.url());
        } catch (URISyntaxException e) {
            throw new ConfigException("not a git URL: " + remote.url());
        }
        String tracking = remote.name() == null || !t.ref().startsWith("refs/heads/")
                ? null
                : "refs/remotes/" + remote.name() + "/" + t.ref().substring("refs/heads/".length());
        ObjectId expectedId = ObjectIds.isZero(expected) ? ObjectId.zeroId() : ObjectId.fromString(expected);
        // forceUpdate: a rewrite under the holder's own lease is allowed; the expected old id and the
        // remote's hook decide whether it discards anyone else's work.
        RemoteRefUpdate update = new RemoteRefUpdate(repo, t.ref(), local, t.ref(), true, tracking, expectedId);
        try (Transport transport = Transport.open(repo, uri)) {
            if (remote.localPath() != null) {
                // JGit would otherwise serve a local path in-process, where the repository's hooks never run.
                transport.setOptionReceivePack(shellQuote(remotes.gitPath()) + " receive-pack");
            }
            transport.setPushOptions(options);
            PushResult result = transport.push(NullProgressMonitor.INSTANCE, List.of(update));
            return new Attempt(update, result, options != null);
        }
    }

    private PushOutcome outcome(Request r, Target t, GitRemotes.Remote remote, Lease lease, String newSha, Attempt a) {
        String expected = lease.grantSha();
        RemoteRefUpdate u = a.update();
        List<String> remoteLines = remoteLines(a.result().getMessages());
        switch (u.getStatus()) {
            case OK:
            case UP_TO_DATE:
                return pushed(r, t, lease, newSha, a, remoteLines);
            case REJECTED_REMOTE_CHANGED:
                return remoteChanged(r, t, remote, lease, newSha, a);
            default:
                List<String> fenced = fencedLines(remoteLines);
                if (!fenced.isEmpty()) {
                    return new PushOutcome.Fenced(t.resource(), t.ref(), lease.token(), expected, newSha, true, fenced);
                }
                List<String> lines = new ArrayList<>(remoteLines);
                lines.add("fence push: " + t.ref() + " was rejected by " + remote.url() + " (" + u.getStatus()
                        + (u.getMessage() == null ? "" : ": " + u.getMessage()) + ")");
                return new PushOutcome.Rejected(
                        t.resource(),
                        t.ref(),
                        lease.token(),
                        expected,
                        newSha,
                        u.getStatus().name(),
                        lines);
        }
    }

    private PushOutcome pushed(Request r, Target t, Lease lease, String newSha, Attempt a, List<String> remoteLines) {
        List<String> lines = new ArrayList<>(remoteLines);
        boolean moved = true;
        if (!newSha.equals(lease.grantSha())) {
            CheckOutcome c = leases.moveGrantSha(t.resource(), r.holder(), lease.token(), lease.grantSha(), newSha);
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
                a.update().getStatus() == RemoteRefUpdate.Status.UP_TO_DATE,
                a.withOptions(),
                moved,
                lines);
    }

    private PushOutcome remoteChanged(
            Request r, Target t, GitRemotes.Remote remote, Lease lease, String newSha, Attempt a) {
        String actual;
        try {
            actual = remotes.tip(t.top(), remote, t.ref());
        } catch (ConfigException e) {
            var advertised = a.result().getAdvertisedRef(t.ref());
            actual = advertised == null || advertised.getObjectId() == null
                    ? ObjectIds.ZERO
                    : advertised.getObjectId().name();
        }
        Status status = leases.status(t.resource());
        Lease current = status.state().lease();
        String currentHolder =
                current != null && current.token() == status.state().latestGranted() ? current.holder() : null;
        Tip tip = status.state().tip();
        if (tip != null && !tip.sha().equals(actual)) {
            tip = null;
        }
        String detail = "the remote's " + t.ref() + " is "
                + (ObjectIds.isZero(actual) ? "gone" : "at " + ObjectIds.abbreviate(actual)) + ", but your lease"
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

    /** The remote's message lines without transport prefixes ({@code remote: }, GitLab's {@code GL-HOOK-ERR: }). */
    static List<String> remoteLines(String messages) {
        List<String> out = new ArrayList<>();
        if (messages == null) {
            return out;
        }
        for (String raw : messages.split("\r?\n|\r")) {
            String line = raw;
            boolean stripped = true;
            while (stripped) {
                stripped = false;
                for (String prefix : new String[] {"remote: ", "remote:", "GL-HOOK-ERR: ", "GL-HOOK-ERR:"}) {
                    if (line.startsWith(prefix)) {
                        line = line.substring(prefix.length());
                        stripped = true;
                    }
                }
            }
            line = line.stripTrailing();
            if (!line.isEmpty()) {
                out.add(line);
            }
        }
        return out;
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

    private static String shellQuote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
