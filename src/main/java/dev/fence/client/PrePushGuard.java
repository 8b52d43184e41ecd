package dev.fence.client;

import dev.fence.core.ConfigException;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService.Status;
import dev.fence.core.LeaseStanding;
import dev.fence.core.ObjectIds;
import dev.fence.core.Reason;
import dev.fence.core.Resources;
import dev.fence.core.StoreUnavailableException;
import dev.fence.core.Tip;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The client-side pre-push guard ({@code fence guard pre-push}, run by the hook {@link GuardInstaller}
 * writes). For every branch a {@code git push} from the clone would update, it refuses unless the
 * clone's holder holds the branch's lease and the remote's actual tip ({@code git ls-remote}) is still
 * the SHA the lease recorded. So an agent that types {@code git push --force} over someone else's work
 * is stopped before anything is sent.
 *
 * <p>A guardrail, not the fence: {@code git push --no-verify} skips every pre-push hook. The fence is
 * the remote's pre-receive hook and the expected old id {@link FencedPush} sends.
 *
 * <p>Fails closed: a missing configuration, an unreachable store or an unreadable remote refuses the
 * push.
 */
public final class PrePushGuard {
    /** The git config keys the guard reads from the clone. */
    static final String HOLDER_KEY = "fence.holder";

    static final String REPO_ID_KEY = "fence.repoId";
    static final String STORE_KEY = "fence.store";
    static final String SERVER_KEY = "fence.server";

    /** Opens lease access for what the clone's git config names. */
    @FunctionalInterface
    public interface Opener {
        /**
         * @param store {@value #STORE_KEY} of the clone, or null
         * @param server {@value #SERVER_KEY} of the clone, or null
         */
        LeaseOperations open(String store, String server);
    }

    /** What to print on stderr and how to exit (0 lets git push, 1 stops it). */
    public record Result(int exitCode, List<String> lines) {}

    private final GitRemotes remotes;
    private final Opener openLeases;

    /**
     * @param remotes git access with the hook's environment
     * @param openLeases opens lease access for the store or server configured in the clone (null: the
     *     environment's or the default)
     */
    public PrePushGuard(GitRemotes remotes, Opener openLeases) {
        this.remotes = remotes;
        this.openLeases = openLeases;
    }

    /** One line of git's pre-push input. */
    record PushLine(String localRef, String localSha, String remoteRef, String remoteSha) {}

    /**
     * Judges the refs on {@code stdin}.
     *
     * @param clone the clone git runs the hook in
     * @param remoteName the remote's name, or its URL when the push named a URL (git's first argument)
     * @param url the URL pushed to (git's second argument)
     */
    public Result run(Path clone, String remoteName, String url, InputStream stdin) {
        List<PushLine> pushes;
        try {
            pushes = parse(stdin);
        } catch (InvalidInputException e) {
            return refuse(List.of("fence guard: " + e.getMessage()));
        }
        List<PushLine> branches = pushes.stream()
                .filter(p -> p.remoteRef().startsWith("refs/heads/"))
                .toList();
        if (branches.isEmpty()) {
            return new Result(0, List.of());
        }
        String holder = remotes.config(clone, HOLDER_KEY);
        String repoId = remotes.config(clone, REPO_ID_KEY);
        if (holder == null || repoId == null) {
            return refuse(List.of(
                    "fence guard: this clone has no " + (holder == null ? HOLDER_KEY : REPO_ID_KEY)
                            + " in its git config, so the guard cannot tell whose lease a push needs.",
                    "fence guard: run 'fence guard install --clone " + clone + " --holder NAME --repo ID'"
                            + " (or remove .git/hooks/pre-push to stop guarding this clone)."));
        }
        GitRemotes.Remote remote = new GitRemotes.Remote(remoteName, url);
        List<String> lines = new ArrayList<>();
        try (LeaseOperations leases =
                openLeases.open(remotes.config(clone, STORE_KEY), remotes.config(clone, SERVER_KEY))) {
            for (PushLine p : branches) {
                lines.addAll(check(leases, clone, remote, holder, Resources.forRef(repoId, p.remoteRef()), p));
            }
        } catch (StoreUnavailableException | ConfigException e) {
            return refuse(List.of(
                    "fence guard: cannot check the lease (" + e.getMessage() + "); the push is refused until it can.",
                    "fence guard: this is an infrastructure problem, not a conflict: report it."));
        } catch (InvalidInputException e) {
            return refuse(List.of("fence guard: " + e.getMessage()));
        }
        if (lines.isEmpty()) {
            return new Result(0, List.of());
        }
        lines.add("fence guard (pre-push): push refused before anything was sent. Push with 'fence push', which"
                + " carries your lease; 'git push --no-verify' skips this guard but not the fence.");
        return new Result(1, lines);
    }

    private List<String> check(
            LeaseOperations leases, Path clone, GitRemotes.Remote remote, String holder, String resource, PushLine p) {
        LeaseStanding standing = leases.standing(resource, holder);
        if (standing instanceof LeaseStanding.NotHeld lost) {
            return FencedMessage.lines(lost.fenced());
        }
        Lease lease = ((LeaseStanding.Holds) standing).lease();
        if (lease.grantSha() == null) {
            return List.of("fence guard: your lease on " + resource + " (token " + lease.token() + ") recorded no"
                    + " remote SHA, so the guard cannot tell whether " + p.remoteRef() + " moved since; acquire"
                    + " the lease with 'fence lease acquire ... --git-remote " + remote.name() + " --grant-file FILE',"
                    + " FILE holding this lease's grant (the lease is yours: the acquire shows its grant to take"
                    + " it again).");
        }
        String actual = remotes.tip(clone, remote, p.remoteRef());
        if (actual.equals(lease.grantSha()) || (ObjectIds.isZero(actual) && ObjectIds.isZero(lease.grantSha()))) {
            return List.of();
        }
        Status status = leases.status(resource);
        Tip tip = status.state().tip();
        Fenced f = new Fenced(
                resource,
                p.remoteRef(),
                lease.token(),
                status.state().latestGranted(),
                Reason.REMOTE_CHANGED,
                null,
                tip != null && tip.sha().equals(actual) ? tip : null,
                "the remote's " + p.remoteRef() + " is "
                        + (ObjectIds.isZero(actual) ? "gone" : "at " + ObjectIds.abbreviate(actual))
                        + ", but your lease recorded "
                        + (ObjectIds.isZero(lease.grantSha()) ? "no branch" : ObjectIds.abbreviate(lease.grantSha())));
        return FencedMessage.lines(f);
    }

    private static Result refuse(List<String> lines) {
        return new Result(1, lines);
    }

    static List<PushLine> parse(InputStream stdin) {
        List<PushLine> out = new ArrayList<>();
        try {
            BufferedReader r = new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8));
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.strip().split(" ");
                if (f.length != 4 || !ObjectIds.isValid(f[1]) || !ObjectIds.isValid(f[3])) {
                    throw new InvalidInputException("unexpected pre-push input line (want '<local ref> <local sha>"
                            + " <remote ref> <remote sha>'): " + line);
                }
                out.add(new PushLine(f[0], f[1], f[2], f[3]));
            }
        } catch (IOException e) {
            throw new InvalidInputException("cannot read the pre-push input: " + e.getMessage());
        }
        return out;
    }
}
