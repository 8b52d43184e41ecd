package dev.fence.core;

import java.util.Optional;

/**
 * Maps git branches to resource names. The lease client and the hook both call {@link #forRef}, so an
 * agent that leases {@code (repo, ref)} and a hook that judges a push to the same ref name the same
 * resource.
 *
 * <p>The form is {@code git:<repo-id>:<full-ref-name>}, e.g. {@code git:project-42:refs/heads/main}.
 * Git forbids {@code :} in ref names, so the last colon always separates the repo id (which may itself
 * contain colons or slashes, as GHES's {@code owner/repo} does) from the ref.
 */
public final class Resources {
    /** Prefix of every resource name that stands for a git ref. */
    public static final String GIT_PREFIX = "git:";

    private Resources() {}

    /** A git ref named as a resource. */
    public record GitRef(String repoId, String ref) {}

    /**
     * Returns the resource name of branch or ref {@code ref} of repository {@code repoId}.
     *
     * @param ref a full ref name ({@code refs/heads/main}); a short branch name ({@code main}) is taken
     *     as {@code refs/heads/main}
     * @throws InvalidInputException when the repo id or ref is not valid
     */
    public static String forRef(String repoId, String ref) {
        Names.require("repo id", repoId);
        String full = RefNames.full(ref);
        return Names.require("resource", GIT_PREFIX + repoId + ":" + full);
    }

    /** Splits a resource name made by {@link #forRef}; empty for plain resources such as {@code db/migrations}. */
    public static Optional<GitRef> parse(String resource) {
        if (resource == null || !resource.startsWith(GIT_PREFIX)) {
            return Optional.empty();
        }
        int colon = resource.lastIndexOf(':');
        if (colon <= GIT_PREFIX.length()) {
            return Optional.empty();
        }
        String ref = resource.substring(colon + 1);
        if (!ref.startsWith("refs/")) {
            return Optional.empty();
        }
        return Optional.of(new GitRef(resource.substring(GIT_PREFIX.length(), colon), ref));
    }
}
