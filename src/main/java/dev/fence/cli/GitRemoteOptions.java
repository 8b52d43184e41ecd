package dev.fence.cli;

import dev.fence.client.GitRemotes;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Resources;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --git-remote NAME|URL [--clone PATH]}: record the remote branch's tip when a lease is granted. */
final class GitRemoteOptions {
    @Option(
            names = "--git-remote",
            paramLabel = "NAME|URL",
            description = "Record the remote branch's current tip (git ls-remote; the zero id when the branch does"
                    + " not exist) as the lease's expected SHA, which fence push requires the remote to still hold."
                    + " A remote name of the clone or a URL. The resource must be a git resource.")
    String remote;

    @Option(
            names = "--clone",
            paramLabel = "PATH",
            description = "The clone whose remote --git-remote names (default: the current directory).")
    Path clone;

    /**
     * The SHA to record for {@code resource}, or null without {@code --git-remote}.
     *
     * @throws InvalidInputException when {@code resource} is not a git resource
     */
    String grantSha(Context ctx, String resource) {
        if (remote == null) {
            if (clone != null) {
                throw new InvalidInputException("--clone goes with --git-remote");
            }
            return null;
        }
        Resources.GitRef git = Resources.parse(resource)
                .orElseThrow(() -> new InvalidInputException("--git-remote needs a git resource (--repo ID --ref REF,"
                        + " or --resource git:<repo-id>:<ref>); '" + resource + "' is not one"));
        GitRemotes remotes = new GitRemotes(ctx.env());
        Path dir = clonePath(ctx);
        return remotes.tip(dir, remotes.resolve(dir, remote), git.ref());
    }

    Path clonePath(Context ctx) {
        return clone == null ? ctx.cwd() : ctx.cwd().resolve(clone).normalize();
    }
}
