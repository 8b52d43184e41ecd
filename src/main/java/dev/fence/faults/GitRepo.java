package dev.fence.faults;

import dev.fence.git.Git;
import dev.fence.install.BareRepoInstaller;
import dev.fence.install.InstallResult;
import dev.fence.install.Launch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The bare repository of a fault run, with fence's pre-receive hook installed by {@link BareRepoInstaller}
 * (as {@code fence install --bare} does), one branch per fenced resource, and the clients' clones. Clones
 * make their commits with {@code git commit-tree} and push them by id, so no work tree or index is
 * involved and each push lands exactly the one commit its holder wrote.
 */
final class GitRepo implements HistoryChecker.Commits {
    /** The repo id fence names resources after. */
    static final String REPO_ID = "faults";

    /** git's empty tree, which every repository knows. */
    private static final String EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

    private final Path dir;
    private final Path bare;
    private final Map<String, String> env;
    private final Git git;
    private final Launch launch;
    private final List<String> branches;

    private GitRepo(Path dir, Path bare, Map<String, String> env, Launch launch, List<String> branches) {
        this.dir = dir;
        this.bare = bare;
        this.env = env;
        this.git = new Git(env);
        this.launch = launch;
        this.branches = List.copyOf(branches);
    }

    /**
     * Creates {@code <dir>/faults.git} with each of {@code branches} at a seed commit, and installs fence's
     * hook for {@code storeUrl}.
     *
     * @param processEnv the environment {@code PATH} (for git) comes from
     * @param launch how the hook starts fence
     */
    static GitRepo create(
            Path dir, List<String> branches, Map<String, String> processEnv, Launch launch, String storeUrl)
            throws IOException {
        Path home = dir.resolve("home");
        Files.createDirectories(home);
        Map<String, String> env = Git.isolatedEnv(processEnv, home, "fence faults", "faults@localhost");
        env.put("LANG", "C");
        env.put("USER", "faults");
        Path bare = dir.resolve(REPO_ID + ".git");
        Git g = new Git(env);
        g.check(dir, "init", "-q", "--bare", "-b", branches.get(0), bare.toString());
        // Discarded commits must stay readable for the final check.
        g.check(bare, "config", "gc.auto", "0");
        String seed = g.check(bare, "commit-tree", EMPTY_TREE, "-m", "seed");
        for (String b : branches) {
            g.check(bare, "update-ref", "refs/heads/" + b, seed);
        }
        GitRepo repo = new GitRepo(dir, bare, env, launch, branches);
        repo.install(storeUrl);
        return repo;
    }

    /** (Re)installs the hook with {@code storeUrl} in the repository's {@code fence.conf}. */
    void install(String storeUrl) throws IOException {
        InstallResult r = new BareRepoInstaller(env)
                .install(new BareRepoInstaller.Request(bare, REPO_ID, storeUrl, launch, false, false));
        if (!(r instanceof InstallResult.Installed)) {
            throw new IOException("fence install --bare " + bare + " refused: " + r);
        }
    }

    List<String> branches() {
        return branches;
    }

    Path bare() {
        return bare;
    }

    /** A clone for {@code holder}, whose pushes name {@code holder} as the pusher. */
    Clone clone(String holder) {
        Path clone = dir.resolve("clone-" + holder);
        git.check(dir, "clone", "-q", "--no-checkout", bare.toString(), clone.toString());
        return new Clone(clone);
    }

    /** Each branch's value now (null when it is gone). */
    Map<String, String> tips() {
        Map<String, String> out = new LinkedHashMap<>();
        for (String b : branches) {
            Git.Result r = git.run(bare, "rev-parse", "--verify", "-q", "refs/heads/" + b);
            out.put("refs/heads/" + b, r.exit() == 0 ? Git.chomp(r.stdout()) : null);
        }
        return out;
    }

    @Override
    public Set<String> reachable(String tip) {
        return revList(tip);
    }

    @Override
    public Set<String> discarded(String from, String to) {
        return revList(from, "^" + to);
    }

    private Set<String> revList(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "rev-list";
        System.arraycopy(args, 0, all, 1, args.length);
        Git.Result r = git.run(bare, all);
        Set<String> out = new HashSet<>();
        if (r.exit() != 0) {
            return out;
        }
        for (String line : r.stdout().split("\n")) {
            if (!line.isBlank()) {
                out.add(line.trim());
            }
        }
        return out;
    }

    /** What one push did. */
    record PushResult(boolean accepted, boolean forced, String oldId, String reason) {}

    /** A client's clone. Used by one thread at a time. */
    final class Clone {
        private final Path dir;

        Clone(Path dir) {
            this.dir = dir;
        }

        void fetch() {
            git.check(dir, "fetch", "-q", "origin");
        }

        /** The branch's value as last fetched. */
        String fetched(String branch) {
            return git.check(dir, "rev-parse", "--verify", "-q", "refs/remotes/origin/" + branch);
        }

        /** A new commit on {@code parent} (same tree); its id. */
        String commitOn(String parent, String message) {
            return git.check(dir, "commit-tree", parent + "^{tree}", "-p", parent, "-m", message);
        }

        /** True when this clone has the commit (it fetched or made it). */
        boolean has(String commit) {
            return git.run(dir, "cat-file", "-e", commit + "^{commit}").exit() == 0;
        }

        /**
         * Pushes {@code commit} to {@code branch} with {@code -o fence=<token> -o fence-proof=<proof>}, as
         * {@code pusher}; {@code force} allows a non-fast-forward update.
         */
        PushResult push(String commit, String branch, long token, String proof, boolean force, String pusher) {
            Map<String, String> e = new HashMap<>(env);
            e.put("REMOTE_USER", pusher); // the pusher name plain git gives the hook
            String ref = "refs/heads/" + branch;
            Git.Result r = new Git(e)
                    .run(
                            dir,
                            "push",
                            "--porcelain",
                            "-o",
                            "fence=" + token,
                            "-o",
                            "fence-proof=" + proof,
                            "origin",
                            (force ? "+" : "") + commit + ":" + ref);
            return parse(r, ref);
        }
    }

    /** Reads {@code git push --porcelain}'s line for {@code ref}, and the hook's first line. */
    static PushResult parse(Git.Result r, String ref) {
        for (String line : r.stdout().split("\n")) {
            String[] f = line.split("\t");
            if (f.length < 3 || f[0].length() != 1 || !f[1].endsWith(":" + ref)) {
                continue;
            }
            char flag = f[0].charAt(0);
            String summary = f[2].trim();
            if (flag == ' ' || flag == '+' || flag == '*') {
                int dots = summary.indexOf("..");
                String old = flag == '*' || dots < 0 ? null : summary.substring(0, dots);
                return new PushResult(true, flag == '+', old, null);
            }
            return new PushResult(false, false, null, reason(r.stderr(), summary));
        }
        return new PushResult(false, false, null, reason(r.stderr(), "git push exit " + r.exit()));
    }

    private static String reason(String stderr, String fallback) {
        String first = null;
        for (String line : stderr.split("\n")) {
            if (!line.startsWith("remote: ")) {
                continue;
            }
            String l = line.substring("remote: ".length()).trim();
            if (l.startsWith("FENCED")) {
                return l;
            }
            if (first == null && !l.isEmpty()) {
                first = l;
            }
        }
        return first != null ? first : fallback;
    }
}
