package dev.fence.hook;

import dev.fence.core.Actor;
import dev.fence.core.HostKind;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.core.Printable;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Works out which git host ran the hook, which repo it is for, and who pushed, from the hook's
 * environment.
 *
 * <p>Detection, first match wins:
 *
 * <table>
 *   <caption>Host detection and identity variables</caption>
 *   <tr><th>host</th><th>detected by</th><th>repo id</th><th>pusher</th><th>via</th></tr>
 *   <tr><td>GitLab</td><td>{@code GL_ID} or {@code GL_REPOSITORY}</td><td>{@code GL_REPOSITORY}
 *       (display {@code GL_PROJECT_PATH})</td><td>{@code GL_USERNAME}, else {@code GL_ID}</td>
 *       <td>{@code GL_PROTOCOL}</td></tr>
 *   <tr><td>GHES</td><td>{@code GITHUB_REPO_NAME}</td><td>{@code GITHUB_REPO_NAME}</td>
 *       <td>{@code GITHUB_USER_LOGIN}</td><td>{@code GITHUB_VIA}</td></tr>
 *   <tr><td>Gitea</td><td>{@code GITEA_REPO_ID}</td><td>{@code GITEA_REPO_ID} (display {@code
 *       GITEA_REPO_USER_NAME/GITEA_REPO_NAME})</td><td>{@code GITEA_PUSHER_NAME}</td>
 *       <td>{@code GITEA_PUSH_TRIGGER}</td></tr>
 *   <tr><td>plain git</td><td>none of the above</td><td>the override, else {@code fence.repoId} in
 *       {@code <gitDir>/config}, else the repo directory's name without {@code .git}</td>
 *       <td>the first set one of the configured {@code pusher-variables} ({@link
 *       HookConfig#pusherVariables()}; default {@code GL_USER}, {@code REMOTE_USER}, {@code USER}, {@code
 *       LOGNAME})</td>
 *       <td>none</td></tr>
 * </table>
 *
 * <p>Only variables the git host or server process sets are read: there is no fence variable to name
 * the pusher, since on a local-path remote the hook runs in the pusher's own environment and such a
 * variable would let the pusher pick the name a pusher policy matches (the README's "Trust model").
 * Which variables name a plain-git pusher is the hook's configuration file's to say, never the
 * environment's. gitolite comes first by default because it runs every push as one shared account
 * ({@code USER=git}) and names the real pusher, from the key that logged in, in {@code GL_USER}.
 *
 * <p>An empty variable counts as unset. A host that is detected but lacks a repo or pusher variable it
 * always sets is a broken hook setup (GitLab has shipped such bugs), and fence refuses to guess: {@link
 * InvalidInputException} names the missing variable. Values must be valid {@link Names}.
 *
 * <p>Stateless and thread-safe.
 */
public final class HookEnvironments {
    private HookEnvironments() {}

    /**
     * The variables that carry a push's host identity and push options, as globs ({@code *} at the end
     * only): what a remote hook sends {@code fence serve}, and ({@link #isPushVariable}) all the server
     * takes from it. {@code fence install} writes this list into the curl shim's configuration.
     */
    public static final List<String> HOST_VARIABLES = List.of(
            "GL_*", "GITHUB_*", "GITEA_*", "GIT_PUSH_OPTION_*", "GIT_NAMESPACE", "REMOTE_USER", "USER", "LOGNAME");

    /**
     * True for the {@link #HOST_VARIABLES} and {@code FENCE_REPO_ID}, the repo id the remote hook's
     * installation named.
     */
    public static boolean isPushVariable(String name) {
        if (name.equals("FENCE_REPO_ID")) {
            return true;
        }
        for (String v : HOST_VARIABLES) {
            if (v.endsWith("*") ? name.startsWith(v.substring(0, v.length() - 1)) : name.equals(v)) {
                return true;
            }
        }
        return false;
    }

    /** As {@link #detect(Map, Path, String)} without a repo id override. */
    public static HookEnvironment detect(Map<String, String> env, Path gitDir) {
        return detect(env, gitDir, (String) null);
    }

    /** As {@link #detect(Map, Path, String, List)} with the default pusher variables. */
    public static HookEnvironment detect(Map<String, String> env, Path gitDir, String repoIdOverride) {
        return detect(env, gitDir, repoIdOverride, HookConfig.DEFAULT_PUSHER_VARIABLES);
    }

    /**
     * As {@link #detect(Map, Path, String, List)} with the repo id override and pusher variables of
     * {@code config}: what the installed hook resolves.
     */
    public static HookEnvironment detect(Map<String, String> env, Path gitDir, HookConfig config) {
        return detect(env, gitDir, config.repoId().orElse(null), config.pusherVariables());
    }

    /**
     * The first of {@code pusherVariables} set (non-empty) in {@code env}, or null: the variable a plain-git
     * hook takes its pusher from.
     */
    public static String pusherVariable(Map<String, String> env, List<String> pusherVariables) {
        for (String name : pusherVariables) {
            if (present(env, name)) {
                return name;
            }
        }
        return null;
    }

    /**
     * The repository as its host names it, before {@code GIT_NAMESPACE} makes each namespace a repository of
     * its own ({@link #detect(Map, Path, HookConfig)} without that step): the plain-git repo id a hook in
     * server mode sends as {@code FENCE_REPO_ID}, to which {@code fence serve} adds the namespace itself, as
     * the curl shim's installed repo id has none.
     *
     * @throws InvalidInputException as {@link #detect(Map, Path, String, List)}
     */
    public static HookEnvironment detectRepository(Map<String, String> env, Path gitDir, HookConfig config) {
        return host(env, gitDir, config.repoId().orElse(null), config.pusherVariables());
    }

    /**
     * Detects the hook environment.
     *
     * @param env the hook's environment
     * @param gitDir the repository the hook runs for ({@code GIT_DIR}, or the hook's working directory);
     *     used on plain git only, may be null elsewhere
     * @param repoIdOverride plain git only: the repo id to use instead of {@code fence.repoId} and the
     *     directory name (from {@link HookConfig#repoId()}); null for none
     * @param pusherVariables plain git only: the variables that name the pusher, tried in order ({@link
     *     HookConfig#pusherVariables()})
     * @throws InvalidInputException when an identity variable the host should set is missing or invalid
     * @throws dev.fence.core.ConfigException when the repo's git config cannot be read
     */
    public static HookEnvironment detect(
            Map<String, String> env, Path gitDir, String repoIdOverride, List<String> pusherVariables) {
        HookEnvironment e = host(env, gitDir, repoIdOverride, pusherVariables);
        String ns = GitNamespace.of(env);
        if (ns.isEmpty()) {
            return e;
        }
        // Each namespace is a repository of its own to its pushers: its branches are resources of their own.
        return new HookEnvironment(
                e.host(),
                Names.require("repo id", GitNamespace.repoId(e.repoId(), ns)),
                GitNamespace.repoId(e.repoDisplay(), ns),
                e.actor());
    }

    private static HookEnvironment host(
            Map<String, String> env, Path gitDir, String repoIdOverride, List<String> pusherVariables) {
        if (present(env, "GL_ID") || present(env, "GL_REPOSITORY")) {
            return gitlab(env);
        } else if (present(env, "GITHUB_REPO_NAME")) {
            return ghes(env);
        } else if (present(env, "GITEA_REPO_ID")) {
            return gitea(env);
        }
        return plain(env, gitDir, repoIdOverride, pusherVariables);
    }

    private static HookEnvironment gitlab(Map<String, String> env) {
        String repoId = require(env, "GitLab", "GL_REPOSITORY");
        String pusher = present(env, "GL_USERNAME")
                ? value(env, "GitLab", "GL_USERNAME")
                : present(env, "GL_ID") ? value(env, "GitLab", "GL_ID") : null;
        if (pusher == null) {
            throw missing("GitLab", "GL_USERNAME", " (nor its fallback GL_ID)");
        }
        String display = present(env, "GL_PROJECT_PATH") ? value(env, "GitLab", "GL_PROJECT_PATH") : repoId;
        return new HookEnvironment(
                HostKind.GITLAB, repoId, display, new Actor(pusher, HostKind.GITLAB, optional(env, "GL_PROTOCOL")));
    }

    private static HookEnvironment ghes(Map<String, String> env) {
        String repoId = require(env, "GHES", "GITHUB_REPO_NAME");
        String pusher = require(env, "GHES", "GITHUB_USER_LOGIN");
        return new HookEnvironment(
                HostKind.GHES, repoId, repoId, new Actor(pusher, HostKind.GHES, optional(env, "GITHUB_VIA")));
    }

    private static HookEnvironment gitea(Map<String, String> env) {
        String repoId = require(env, "Gitea", "GITEA_REPO_ID");
        String pusher = require(env, "Gitea", "GITEA_PUSHER_NAME");
        String display = present(env, "GITEA_REPO_USER_NAME") && present(env, "GITEA_REPO_NAME")
                ? value(env, "Gitea", "GITEA_REPO_USER_NAME") + "/" + value(env, "Gitea", "GITEA_REPO_NAME")
                : repoId;
        return new HookEnvironment(
                HostKind.GITEA,
                repoId,
                display,
                new Actor(pusher, HostKind.GITEA, optional(env, "GITEA_PUSH_TRIGGER")));
    }

    private static HookEnvironment plain(
            Map<String, String> env, Path gitDir, String repoIdOverride, List<String> pusherVariables) {
        String repoId;
        if (repoIdOverride != null) {
            repoId = checked("plain git", "repo id override", repoIdOverride);
        } else {
            if (gitDir == null) {
                throw new InvalidInputException(
                        "plain git: the repository directory is unknown (no GIT_DIR), so fence cannot derive a repo id");
            }
            Path dir = gitDir.toAbsolutePath().normalize();
            Optional<String> configured = GitConfigFile.get(dir.resolve("config"), "fence", "repoId");
            repoId = configured.isPresent()
                    ? checked("plain git", "fence.repoId in " + dir.resolve("config"), configured.get())
                    : checked("plain git", "repo directory name", directoryRepoId(dir));
        }
        String variable = pusherVariable(env, pusherVariables);
        if (variable == null) {
            throw new InvalidInputException("plain git hook environment names no pusher: none of "
                    + String.join(", ", pusherVariables) + " is set (the hook's pusher-variables); run the git"
                    + " server process with USER set, behind a web server that sets REMOTE_USER, or set"
                    + " pusher-variables in fence.conf to the variable your ssh forced command sets");
        }
        String pusher = value(env, "plain git", variable);
        return new HookEnvironment(HostKind.PLAIN, repoId, repoId, new Actor(pusher, HostKind.PLAIN, null));
    }

    /**
     * The repo id a plain git repository gets when none is configured: its directory name without
     * {@code .git} ({@code /srv/git/app.git} → {@code app}); for a {@code .git} directory inside a work
     * tree, the work tree's name.
     */
    public static String directoryRepoId(Path gitDir) {
        Path dir = gitDir.toAbsolutePath().normalize();
        Path name = dir.getFileName();
        if (name != null && name.toString().equals(".git") && dir.getParent() != null) {
            name = dir.getParent().getFileName();
        }
        if (name == null) {
            throw new InvalidInputException("cannot derive a repo id from " + dir + "; configure one (repo-id)");
        }
        String id = name.toString();
        return id.endsWith(".git") && id.length() > 4 ? id.substring(0, id.length() - 4) : id;
    }

    private static boolean present(Map<String, String> env, String name) {
        String v = env.get(name);
        return v != null && !v.isEmpty();
    }

    private static String require(Map<String, String> env, String host, String name) {
        if (!present(env, name)) {
            throw missing(host, name, "");
        }
        return value(env, host, name);
    }

    private static String value(Map<String, String> env, String host, String name) {
        return checked(host, name, env.get(name));
    }

    private static String optional(Map<String, String> env, String name) {
        return present(env, name) ? Printable.escape(env.get(name), Names.MAX_LENGTH) : null;
    }

    private static String checked(String host, String what, String value) {
        try {
            return Names.require(what, value);
        } catch (InvalidInputException e) {
            throw new InvalidInputException(host + " hook environment: " + Printable.escape(e.getMessage(), 300));
        }
    }

    private static InvalidInputException missing(String host, String name, String extra) {
        return new InvalidInputException(host + " hook environment is missing " + name + extra
                + "; fence needs it to know the repo and the pusher and will not guess. Check the host's hook"
                + " setup (a known class of host bugs drops this variable for some kinds of push).");
    }
}
