package dev.fence.install;

import dev.fence.core.FencePolicy;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.core.Resources;
import dev.fence.git.Git;
import dev.fence.hook.HookConfig;
import dev.fence.hook.HookEnvironments;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Installs fence into a bare repository served by plain git (ssh, {@code git daemon}, {@code
 * git-http-backend}) or by Gitea/Forgejo.
 *
 * <p>For each of {@code pre-receive} and {@code post-receive}: when the hooks directory has a {@code
 * <hook>.d/} directory, or {@code hooks/<hook>} is a dispatcher that runs one (Gitea's), fence goes in
 * as {@code hooks/<hook>.d/fence}; otherwise it is {@code hooks/<hook>} itself. The hooks directory is
 * the one git uses ({@code core.hooksPath} is honoured). Then, through the real {@code git}:
 * {@code receive.advertisePushOptions=true} (without it {@code git push -o} fails), {@code
 * fence.repoId} and {@code fence.recordLanded} (true when post-receive is installed for the Java hook). With a store URL, {@code <bare>/fence.conf} is written (mode 600).
 *
 * <p>Re-running is safe: fence's own files are updated in place, everything else is left alone; a
 * file fence did not write makes the install refuse (changing nothing) unless forced.
 */
public final class BareRepoInstaller {
    private static final List<String> HOOKS = List.of("pre-receive", "post-receive");

    private final Map<String, String> env;

    /** @param env the environment git runs with; its {@code PATH} must lead to {@code git} */
    public BareRepoInstaller(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /**
     * What to install.
     *
     * @param bare the bare repository
     * @param repoId the repo id to set, or null to keep the configured one (default: the directory name)
     * @param store the store URL to write to {@code <bare>/fence.conf}, or null to leave that file alone
     * @param launch how the hooks start fence
     * @param force replace hooks fence did not write (keeping backups)
     * @param recordLanded also install post-receive, which records every landed push in the ledger (one
     *     more JVM start per push)
     */
    public record Request(
            Path bare, String repoId, String store, Launch launch, boolean force, boolean recordLanded, Shim shim) {
        /** A request for the Java hook. */
        public Request(Path bare, String repoId, String store, Launch launch, boolean force, boolean recordLanded) {
            this(bare, repoId, store, launch, force, recordLanded, null);
        }

        /** A request without the post-receive hook. */
        public Request(Path bare, String repoId, String store, Launch launch, boolean force) {
            this(bare, repoId, store, launch, force, false);
        }
    }

    /**
     * The curl shim instead of the Java hook ({@code --shim curl}): the hooks are {@code
     * hooks/pre-receive-curl.sh}, and {@value HookScripts#SHIM_CONF} beside them names the server, the repo
     * id, and what {@link ShimSettings} derives from {@code policy}.
     *
     * @param server the fence serve URL, or null to keep the one configured (else a placeholder)
     * @param policy the policy fence serve judges with
     * @param credential the hook credential, or null to keep the one configured (else a placeholder)
     */
    public record Shim(String server, FencePolicy policy, String credential) {
        /** A shim whose credential is kept as configured. */
        public Shim(String server, FencePolicy policy) {
            this(server, policy, null);
        }
    }

    /**
     * Installs, or refuses without changing anything.
     *
     * @throws InvalidInputException when {@code bare} is not a bare repository or the repo id is invalid
     * @throws dev.fence.core.ConfigException when git is missing or fails, or a file cannot be written
     */
    public InstallResult install(Request request) {
        Path bare = request.bare().toAbsolutePath().normalize();
        if (!Files.isDirectory(bare)) {
            throw new InvalidInputException("--bare " + bare + ": no such directory");
        }
        Git git = new Git(env);
        Git.Result isBare = git.run(bare, "--git-dir=" + bare, "rev-parse", "--is-bare-repository");
        if (isBare.exit() != 0 || !Git.chomp(isBare.stdout()).equals("true")) {
            throw new InvalidInputException("--bare " + bare + ": not a bare git repository"
                    + (isBare.exit() != 0 ? " (" + isBare.stderr().strip() + ")" : "")
                    + "; create one with 'git init --bare' or point --bare at the repository's directory");
        }
        String configFile = bare.resolve("config").toString();
        String oldRepoId = configured(git, bare, configFile, "fence.repoId");
        String repoId = request.repoId() != null
                ? request.repoId()
                : oldRepoId != null ? oldRepoId : HookEnvironments.directoryRepoId(bare);
        try {
            Names.require("repo id", repoId);
            Resources.forRef(repoId, "refs/heads/main");
        } catch (InvalidInputException e) {
            throw new InvalidInputException("--repo-id: " + e.getMessage());
        }

        List<String> warnings = new ArrayList<>();
        Path hooks = bare.resolve(git.check(bare, "--git-dir=" + bare, "rev-parse", "--git-path", "hooks"))
                .normalize();
        if (!hooks.startsWith(bare)) {
            warnings.add("core.hooksPath points outside this repository (" + hooks + "): the hooks fence writes"
                    + " there run for every repository that shares that directory");
        }
        FilePlan plan = new FilePlan();
        List<String> layout = new ArrayList<>();
        java.util.Set<Path> shimConfs = new java.util.LinkedHashSet<>();
        for (String hook : HOOKS) {
            if (hook.equals("post-receive") && !request.recordLanded()) {
                continue;
            }
            String script = request.shim() != null
                    ? HookScripts.curlShim()
                    : hook.equals("pre-receive")
                            ? HookScripts.preReceive(request.launch())
                            : HookScripts.postReceive(request.launch());
            Path single = hooks.resolve(hook);
            Path dir = hooks.resolve(hook + ".d");
            boolean dispatcher = Files.isRegularFile(single) && HookScripts.isDispatcher(FilePlan.read(single));
            Path written = Files.isDirectory(dir) || dispatcher ? dir.resolve("fence") : single;
            Path conf = written.resolveSibling(HookScripts.SHIM_CONF);
            if (request.shim() != null && shimConfs.add(conf)) {
                // Beside the script, where the shim looks for it; not executable, so no dispatcher runs it.
                String server = ShimSettings.serverFor(conf, request.shim().server());
                plan.add(
                        conf,
                        new ShimSettings(request.shim().policy(), repoId, null)
                                .confFor(conf, server, request.shim().credential()),
                        FilePlan.PRIVATE);
            }
            if (Files.isDirectory(dir) || dispatcher) {
                plan.add(dir.resolve("fence"), script, FilePlan.EXECUTABLE);
                layout.add(hook + ".d/fence");
                if (!dispatcher) {
                    warnings.add(dir + " exists but " + single + " is not a dispatcher that runs it; git runs only "
                            + single + ", so make sure something calls " + dir.resolve("fence"));
                }
            } else {
                plan.add(single, script, FilePlan.EXECUTABLE);
                layout.add(hook);
            }
        }
        if (request.store() != null) {
            plan.add(bare.resolve(HookConfig.REPO_FILE_NAME), HookScripts.fenceConf(request.store()), FilePlan.PRIVATE);
        }
        InstallResult.Refused refused = request.force() ? null : plan.refusal();
        if (refused != null) {
            return refused;
        }

        List<String> done = new ArrayList<>(plan.write());
        done.add(setConfig(git, bare, configFile, "receive.advertisePushOptions", "true"));
        done.add(setConfig(git, bare, configFile, "fence.repoId", repoId));
        // The Java hook then leaves what only a landed push may do to post-receive (see Landings); a curl
        // shim's verdicts are fence serve's, which applies them at the decision.
        done.add(setConfig(
                git,
                bare,
                configFile,
                HookConfig.RECORD_LANDED_KEY,
                Boolean.toString(request.recordLanded() && request.shim() == null)));
        if (oldRepoId != null && !oldRepoId.equals(repoId)) {
            warnings.add("fence.repoId changed from '" + oldRepoId + "' to '" + repoId + "': resources are named"
                    + " after the repo id, so leases and tokens taken under the old id no longer apply here");
        }
        if (request.shim() == null && request.launch() instanceof Launch.Launcher l) {
            if (l.viaPath()) {
                warnings.add("the hooks run '" + l.path() + "' from the PATH of the process that runs git on the"
                        + " server; pass --launcher /path/to/fence/bin/fence (or set FENCE_LAUNCHER) to pin it");
            } else if (!Files.isExecutable(Path.of(l.path()))) {
                warnings.add("launcher " + l.path() + " does not exist or is not executable on this machine");
            }
        }
        if (request.shim() != null
                && (Files.exists(hooks.resolve("update"), java.nio.file.LinkOption.NOFOLLOW_LINKS)
                        || Files.isDirectory(hooks.resolve("update.d")))) {
            warnings.add(hooks.resolve("update") + " exists (an access-control hook, such as gitolite's, that runs"
                    + " after pre-receive): through the curl shim fence serve applies a tokenless push's bump when it"
                    + " admits it, so a push that hook then refuses still supersedes the lease it bumped; the Java"
                    + " hook (fence install without --server) applies it only once the push lands");
        }
        if (request.shim() != null) {
            Path conf = shimConfs.iterator().next();
            if (ShimSettings.existing(conf, "FENCE_SERVER") == null) {
                warnings.add(conf + " has no FENCE_SERVER yet: rerun with --server URL; until then the shim refuses"
                        + " every push to a fenced ref");
            }
            return new InstallResult.Installed(done, warnings, shimSteps(conf, repoId));
        }
        return new InstallResult.Installed(done, warnings, nextSteps(bare, repoId, request.store() != null, layout));
    }

    private static List<String> nextSteps(Path bare, String repoId, boolean storeWritten, List<String> layout) {
        List<String> steps = new ArrayList<>();
        if (!storeWritten && !Files.exists(bare.resolve(HookConfig.REPO_FILE_NAME))) {
            // The hook never takes a store from its environment (FENCE_STORE) or a default file under HOME:
            // on a local-path remote that environment is the pusher's. So this step is the only way in.
            steps.add("Tell the hook where the store is: rerun with --store URL (writes " + bare.resolve("fence.conf")
                    + "), or put 'store = URL' in " + HookConfig.SYSTEM_FILE_NAME + ". Until then every push to a"
                    + " fenced ref is refused (reason=bad-config): the hook uses no default store.");
        } else {
            steps.add("Make sure the user that runs git on the server can read " + bare.resolve("fence.conf")
                    + " (it is mode 600: chown it to that user).");
        }
        if (layout.contains("pre-receive.d/fence")) {
            steps.add("Gitea/Forgejo: the dispatcher runs every hook in pre-receive.d and then fails the push if"
                    + " any failed, so fence's verdict stands; 'Resynchronize hooks' keeps pre-receive.d/fence.");
        }
        steps.add("Agents lease resources named " + Resources.GIT_PREFIX + repoId + ":refs/heads/<branch>"
                + " and push with 'fence push' (which sends -o fence=<token> -o fence-proof=<proof>).");
        steps.add("Check it: a push without a token to a fenced branch is bumped or refused by policy;"
                + " 'git push -o fence=1' with no lease is FENCED.");
        return steps;
    }

    private static List<String> shimSteps(Path conf, String repoId) {
        List<String> steps = new ArrayList<>(ShimSettings.credentialStep(conf, "git"));
        steps.add("Make sure the user that runs git on the server can read " + conf + " (mode 600: chown it to that"
                + " user) and that bash, curl and git are on its PATH.");
        steps.add("fence serve names this repository's resources " + Resources.GIT_PREFIX + repoId
                + ":refs/heads/<branch>; when it cannot be asked, the shim refuses every push to a fenced"
                + " ref. Rerun this install after changing fenced-refs in the server's fence.conf.");
        return steps;
    }

    private static String configured(Git git, Path bare, String configFile, String key) {
        Git.Result r = git.run(bare, "config", "--file", configFile, "--get", key);
        return r.exit() == 0 ? Git.chomp(r.stdout()) : null;
    }

    private static String setConfig(Git git, Path bare, String configFile, String key, String value) {
        if (value.equals(configured(git, bare, configFile, key))) {
            return "unchanged git config " + key + " = " + value;
        }
        git.check(bare, "config", "--file", configFile, key, value);
        return "set git config " + key + " = " + value + " in " + configFile;
    }
}
