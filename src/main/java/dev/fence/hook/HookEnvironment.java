package dev.fence.hook;

import dev.fence.core.Actor;
import dev.fence.core.HostKind;
import dev.fence.core.PushAttempt;
import dev.fence.core.PushOptions;
import dev.fence.core.RefUpdate;
import java.util.List;

/**
 * Where a hook runs and on whose behalf: the host kind, the repo id resources are named after, a repo
 * name for people, and the pusher. Made by {@link HookEnvironments#detect}.
 *
 * @param host the git host that ran the hook
 * @param repoId the stable repo id used in resource names ({@link dev.fence.core.Resources#forRef});
 *     GitLab {@code GL_REPOSITORY}, GHES {@code GITHUB_REPO_NAME}, Gitea {@code GITEA_REPO_ID}, plain git
 *     the configured or directory-derived id
 * @param repoDisplay the repo as people know it (GitLab {@code GL_PROJECT_PATH}, Gitea {@code
 *     owner/name}); equals {@code repoId} when the host offers nothing better
 * @param actor the pusher, the host, and how the push arrived
 */
public record HookEnvironment(HostKind host, String repoId, String repoDisplay, Actor actor) {

    /** Prefix GitLab needs at column 0 of every line it should show to the pusher and in its UI. */
    public static final String GITLAB_LINE_PREFIX = "GL-HOOK-ERR: ";

    /** True when every output line must start with {@link #GITLAB_LINE_PREFIX}. */
    public boolean gitlabStyle() {
        return host == HostKind.GITLAB;
    }

    /** The prefix for each line of output to the pusher: {@link #GITLAB_LINE_PREFIX} on GitLab, else empty. */
    public String linePrefix() {
        return gitlabStyle() ? GITLAB_LINE_PREFIX : "";
    }

    /** The push these options and updates make in this environment. */
    public PushAttempt attempt(PushOptions options, List<RefUpdate> updates) {
        return new PushAttempt(repoId, actor, options, updates);
    }
}
