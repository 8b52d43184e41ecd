package dev.fence.core;

/**
 * Who pushed, as the git host reports it.
 *
 * @param pusher the host's user name for the pusher (GitLab {@code GL_USERNAME}, GHES {@code
 *     GITHUB_USER_LOGIN}, Gitea {@code GITEA_PUSHER_NAME}, plain git the OS user)
 * @param host which kind of host ran the hook
 * @param via how the push arrived when the host says (GitLab {@code GL_PROTOCOL}, GHES {@code
 *     GITHUB_VIA}), or null
 */
public record Actor(String pusher, HostKind host, String via) {}
