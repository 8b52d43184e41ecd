package dev.fence.client;

import dev.fence.core.ConfigException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.ObjectIds;
import dev.fence.core.Printable;
import dev.fence.git.Git;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A clone's remotes, read with the real {@code git}: which URL a remote name pushes to, and what a
 * branch's tip is on the remote right now ({@code git ls-remote}), never what the clone's
 * remote-tracking refs remember (any fetch moves those).
 *
 * <p>Thread-safe.
 */
public final class GitRemotes {
    private final Git git;

    /**
     * @param env the environment git runs with (the process's, passed in by the entry point); its {@code
     *     PATH} must lead to {@code git}. git runs with {@code LC_ALL=C} whatever it says, because fence
     *     reads git's output.
     */
    public GitRemotes(Map<String, String> env) {
        Map<String, String> c = new HashMap<>(env);
        c.put("LC_ALL", "C");
        this.git = new Git(c);
    }

    /**
     * A remote as fence uses it.
     *
     * @param name the remote's name in the clone's config, or null when it was given as a URL
     * @param url where pushes go: the remote's push URL (rewrites applied), local paths made absolute
     */
    public record Remote(String name, String url) {
        /** The local directory this remote is, or null when it is reached over a network transport. */
        public Path localPath() {
            return GitRemotes.localPath(url);
        }
    }

    /** The git that reads and pushes. */
    Git git() {
        return git;
    }

    /** The commit {@code ref} names in the clone, or null when there is no such ref. */
    String localTip(Path clone, String ref) {
        Git.Result r = git.run(clone, "rev-parse", "--verify", "-q", ref + "^{commit}");
        return r.exit() == 0 ? Git.chomp(r.stdout()).strip() : null;
    }

    /**
     * The top directory of the clone that contains {@code dir}.
     *
     * @throws InvalidInputException when {@code dir} is not inside a clone with a work tree
     */
    Path workTree(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new InvalidInputException("--clone " + dir + ": no such directory");
        }
        Git.Result r = git.run(dir, "rev-parse", "--show-toplevel");
        if (r.exit() != 0) {
            throw new InvalidInputException(dir + " is not inside a git clone with a work tree ("
                    + r.stderr().strip() + "); run in the clone or pass --clone PATH");
        }
        return Path.of(Git.chomp(r.stdout()));
    }

    /**
     * Resolves {@code nameOrUrl} in {@code clone}: a configured remote name gives its push URL, anything
     * else that looks like a URL or path is taken as one (a relative path from the clone's top).
     *
     * @throws ConfigException when it is neither a remote of the clone nor a URL or path
     * @throws InvalidInputException when it is empty or starts with {@code -}
     */
    public Remote resolve(Path clone, String nameOrUrl) {
        if (nameOrUrl == null || nameOrUrl.isBlank()) {
            throw new InvalidInputException("the remote must not be empty");
        }
        if (nameOrUrl.startsWith("-")) {
            // Wherever it is passed, git could read it as one of its options (--receive-pack=CMD runs CMD); the
            // calls below also end git's options first, and a path that starts with '-' can be written ./-x.
            throw new InvalidInputException("the remote '" + Printable.escape(nameOrUrl, 80) + "' starts with '-',"
                    + " which git would read as an option; give a remote name or a URL (a path as ./-…)");
        }
        Path top = workTree(clone);
        Git.Result r = isRemoteName(nameOrUrl) ? git.run(top, "remote", "get-url", "--push", "--", nameOrUrl) : null;
        if (r != null && r.exit() == 0) {
            return new Remote(nameOrUrl, absolute(top, Git.chomp(r.stdout()).strip()));
        }
        if (looksLikeUrl(nameOrUrl)) {
            return new Remote(null, absolute(top, nameOrUrl));
        }
        throw new ConfigException("no remote named '" + nameOrUrl + "' in " + top
                + " ('git remote -v' lists them); give a remote name or a URL");
    }

    /**
     * The remote's tip of {@code ref} now, or {@link ObjectIds#ZERO} when the remote has no such ref.
     *
     * @throws ConfigException when the remote cannot be read
     */
    public String tip(Path clone, Remote remote, String ref) {
        Git.Result r = git.run(workTree(clone), "ls-remote", "--", remote.url(), ref);
        if (r.exit() != 0) {
            throw new ConfigException("cannot read " + ref + " from " + remote.url() + " (git ls-remote exit "
                    + r.exit() + "): " + r.stderr().strip());
        }
        for (String line : r.stdout().split("\n")) {
            int tab = line.indexOf('\t');
            // ls-remote matches patterns by their tail; only the exact ref name counts.
            if (tab > 0 && line.substring(tab + 1).equals(ref)) {
                String sha = line.substring(0, tab).strip();
                if (!ObjectIds.isValid(sha)) {
                    throw new ConfigException("git ls-remote printed an unexpected object id for " + ref + ": " + sha);
                }
                return sha;
            }
        }
        return ObjectIds.ZERO;
    }

    /** The current branch of the clone (full ref name), or null when HEAD is detached. */
    String currentBranch(Path clone) {
        Git.Result r = git.run(workTree(clone), "symbolic-ref", "-q", "HEAD");
        return r.exit() == 0 ? Git.chomp(r.stdout()).strip() : null;
    }

    /** A value of the clone's git config, or null when unset. */
    public String config(Path clone, String key) {
        Git.Result r = git.run(clone, "config", "--get", key);
        return r.exit() == 0 ? Git.chomp(r.stdout()).strip() : null;
    }

    /** Sets a value in the clone's own ({@code --local}) git config. */
    void setConfig(Path clone, String key, String value) {
        git.check(clone, "config", "--local", key, value);
    }

    /** Removes a key from the clone's own ({@code --local}) git config; true when it was there. */
    boolean unsetConfig(Path clone, String key) {
        return git.run(clone, "config", "--local", "--unset-all", key).exit() == 0;
    }

    /** The clone's hooks directory (honours {@code core.hooksPath}). */
    Path hooksDir(Path clone) {
        Path top = workTree(clone);
        return top.resolve(git.check(top, "rev-parse", "--git-path", "hooks")).normalize();
    }

    private static boolean isRemoteName(String s) {
        return !s.contains("/") && !s.contains(":") && !s.startsWith(".");
    }

    private static boolean looksLikeUrl(String s) {
        return s.contains("/") || s.contains(":") || s.startsWith(".");
    }

    /** Makes a relative local path absolute against {@code base}; URLs are kept as they are. */
    private static String absolute(Path base, String url) {
        if (url.contains("://") || isScpLike(url)) {
            return url;
        }
        Path p = Path.of(url);
        return p.isAbsolute()
                ? p.normalize().toString()
                : base.resolve(p).normalize().toString();
    }

    /** {@code [user@]host:path}: a colon before any slash. */
    private static boolean isScpLike(String url) {
        int colon = url.indexOf(':');
        int slash = url.indexOf('/');
        return colon > 0 && (slash < 0 || colon < slash);
    }

    static Path localPath(String url) {
        if (url.startsWith("file://")) {
            return Path.of(url.substring("file://".length()));
        }
        if (url.contains("://") || isScpLike(url)) {
            return null;
        }
        return Path.of(url);
    }
}
