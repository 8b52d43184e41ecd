package dev.fence.install;

import dev.fence.core.FencePolicy;
import dev.fence.core.InvalidInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes fence's GitLab server hook: {@code pre-receive.d/50-fence}, either into a global
 * {@code custom_hooks_dir} (every repository on the Gitaly node) or into a tarball for one repository's
 * {@code gitaly hooks set}.
 *
 * <p>GitLab runs {@code <hook>.d/*} in alphabetical order and stops at the first failure; {@code 50-}
 * leaves room on both sides. Global hooks are read only from {@code <hook>.d/} subdirectories.
 * Per-repository hooks can, since GitLab 15.11, only be installed with {@code gitaly hooks set} from a
 * tarball whose root holds {@code custom_hooks/}.
 */
public final class GitLabInstaller {
    /** The hook's file name: GitLab skips names ending in {@code ~} and runs the rest in name order. */
    public static final String HOOK_NAME = "50-fence";

    /** The custom hooks directory GitLab's documentation suggests for Omnibus installs. */
    public static final String SUGGESTED_GLOBAL_DIR = "/var/opt/gitlab/gitaly/custom_hooks";

    /**
     * Writes {@code <dir>/pre-receive.d/50-fence}.
     *
     * @param dir the global custom hooks directory
     * @param launch how the hook starts fence on the Gitaly node
     * @param force replace a {@code 50-fence} fence did not write
     * @throws dev.fence.core.ConfigException when the file cannot be written
     */
    public InstallResult global(Path dir, Launch launch, boolean force) {
        return global(dir, launch, GhesShim.JAVA, null, force);
    }

    /**
     * As {@link #global(Path, Launch, boolean)}; with {@link GhesShim#CURL} the hook is the curl shim,
     * configured by {@code pre-receive.d/}{@value HookScripts#SHIM_CONF} (not executable, so Gitaly does
     * not run it), and no JRE is needed on the Gitaly nodes.
     *
     * @param server the {@code fence serve} URL for the shim's configuration, or null for a placeholder
     */
    public InstallResult global(Path dir, Launch launch, GhesShim shim, String server, boolean force) {
        return global(dir, launch, shim, server, null, FencePolicy.defaults(), force);
    }

    /**
     * As {@link #global(Path, Launch, GhesShim, String, boolean)}.
     *
     * @param credential the hook credential for the shim's configuration, or null to keep the one there
     * @param policy the policy fence serve judges with: the curl shim refuses its fenced refs when the
     *     server cannot be asked ({@link ShimSettings})
     */
    public InstallResult global(
            Path dir,
            Launch launch,
            GhesShim shim,
            String server,
            String credential,
            FencePolicy policy,
            boolean force) {
        Path root = dir.toAbsolutePath().normalize();
        Path hook = root.resolve("pre-receive.d").resolve(HOOK_NAME);
        if (shim == GhesShim.CURL) {
            return curlGlobal(root, hook, server, credential, policy, force);
        }
        FilePlan plan = new FilePlan().add(hook, HookScripts.gitlabPreReceive(launch), FilePlan.EXECUTABLE);
        InstallResult.Refused refused = force ? null : plan.refusal();
        if (refused != null) {
            return refused;
        }
        List<String> done = plan.write();
        List<String> steps = new ArrayList<>();
        steps.add("Point Gitaly at the directory. Omnibus: merge this into /etc/gitlab/gitlab.rb (keep your other"
                + " gitaly['configuration'] settings):\n"
                + "    gitaly['configuration'] = {\n"
                + "      hooks: {\n"
                + "        custom_hooks_dir: '" + root + "',\n"
                + "      },\n"
                + "    }\n"
                + "  Source installs: set [hooks] custom_hooks_dir = \"" + root + "\" in gitaly/config.toml.");
        steps.add(onEveryGitalyNode(launch) + " Copy " + root + " to the same path on every Gitaly node as well"
                + " (Geo does not replicate server hooks).");
        steps.add("Put the hook's configuration in " + "/etc/fence/fence.conf on every Gitaly node (at least"
                + " 'store = URL'; see gitlab-config/fence.conf.example), readable by the git user. GitLab passes"
                + " hooks only its own variables, so FENCE_* environment variables do not reach the hook.");
        steps.add("Make " + hook + " owned by the git user, then apply: sudo gitlab-ctl reconfigure");
        steps.add("Global hooks also run for wiki and design repositories (<id>.wiki.git, <id>.design.git);"
                + " narrow fenced-refs if that matters.");
        steps.add("Check it: push to a test project; a rejection shows the hook's GL-HOOK-ERR: lines. If the hook"
                + " seems not to run: sudo grep PreReceiveHook /var/log/gitlab/gitaly/current");
        return new InstallResult.Installed(done, warnings(launch), steps);
    }

    /**
     * Writes a tarball for {@code gitaly hooks set} holding {@code custom_hooks/pre-receive.d/50-fence}.
     *
     * @param out the tarball to write
     * @param launch how the hook starts fence on the Gitaly node
     * @param force replace an existing file that is not a fence hook tarball
     * @throws InvalidInputException when {@code out} is a directory
     * @throws dev.fence.core.ConfigException when the file cannot be written
     */
    public InstallResult tarball(Path out, Launch launch, boolean force) {
        Path file = out.toAbsolutePath().normalize();
        if (Files.isDirectory(file)) {
            throw new InvalidInputException("--gitlab-tarball " + file + ": is a directory; give a file name such as "
                    + file.resolve("custom_hooks.tar"));
        }
        byte[] tar = Tar.archive(List.of(
                Tar.Entry.directory("custom_hooks"),
                Tar.Entry.directory("custom_hooks/pre-receive.d"),
                Tar.Entry.file("custom_hooks/pre-receive.d/" + HOOK_NAME, 0755, HookScripts.gitlabPreReceive(launch))));
        FilePlan plan = new FilePlan().add(file, tar, FilePlan.READABLE, GitLabInstaller::isOurTarball);
        InstallResult.Refused refused = force ? null : plan.refusal();
        if (refused != null) {
            return refused;
        }
        List<String> done = plan.write();
        List<String> steps = new ArrayList<>();
        steps.add(onEveryGitalyNode(launch));
        steps.add("Put the hook's configuration in /etc/fence/fence.conf on every Gitaly node (at least"
                + " 'store = URL'; see gitlab-config/fence.conf.example), readable by the git user.");
        steps.add("Find the project's storage and relative path (Admin area > Projects > the project: 'Gitaly"
                + " storage name' and 'Relative path', e.g. @hashed/ab/cd/abcd….git).");
        steps.add("Install the hooks on the Gitaly node (on Gitaly Cluster: on every node, against the Praefect"
                + " replica path):\n"
                + "    cat " + file + " | sudo -u git -- /opt/gitlab/embedded/bin/gitaly hooks set --storage <storage>"
                + " --repository <relative path> --config /var/opt/gitlab/gitaly/config.toml\n"
                + "  This replaces the project's custom hooks; an empty tarball removes them.");
        return new InstallResult.Installed(done, warnings(launch), steps);
    }

    private static InstallResult curlGlobal(
            Path root, Path hook, String server, String credential, FencePolicy policy, boolean force) {
        Path conf = hook.resolveSibling(HookScripts.SHIM_CONF);
        FilePlan plan = new FilePlan().add(hook, HookScripts.curlShim(), FilePlan.EXECUTABLE);
        server = ShimSettings.serverFor(conf, server);
        plan.add(
                conf,
                new ShimSettings(policy, null, "GL_REPOSITORY").confFor(conf, server, credential),
                FilePlan.PRIVATE);
        InstallResult.Refused refused = force ? null : plan.refusal();
        if (refused != null) {
            return refused;
        }
        List<String> done = new ArrayList<>(plan.write());
        List<String> warnings = new ArrayList<>();
        if (server == null) {
            warnings.add(HookScripts.SHIM_CONF + " has no FENCE_SERVER yet: set it before pointing Gitaly here");
        }
        List<String> steps = new ArrayList<>(ShimSettings.credentialStep(conf, "gitlab"));
        steps.add("Point Gitaly at the directory (gitlab.rb: gitaly['configuration'] = { hooks: { custom_hooks_dir: '"
                + root + "' } }), copy it to every Gitaly node, make both files owned by the git user (the conf"
                + " mode 600), then: sudo gitlab-ctl reconfigure");
        steps.add("Gitaly passes hooks only GitLab's variables, so FENCE_* settings must be in " + conf + ".");
        steps.add("Check it: a push with -o fence=1 must be FENCED; GitLab shows the GL-HOOK-ERR: lines.");
        return new InstallResult.Installed(done, warnings, steps);
    }

    /** A fence tarball: a ustar archive whose first member is {@code custom_hooks/}, holding our marker. */
    static boolean isOurTarball(byte[] content) {
        return "custom_hooks/".equals(Tar.firstName(content)) && HookScripts.isOurs(content);
    }

    private static String onEveryGitalyNode(Launch launch) {
        if (launch instanceof Launch.JavaJar j) {
            return "On every Gitaly node: install a Java 17+ runtime (the hook runs '" + j.java()
                    + "') and copy fence.jar to " + j.jar() + ".";
        }
        return "On every Gitaly node: install fence so that '" + ((Launch.Launcher) launch).path()
                + "' runs it (with a Java 17+ runtime).";
    }

    private static List<String> warnings(Launch launch) {
        if (launch instanceof Launch.Launcher l && l.viaPath()) {
            return List.of("the hook runs '" + l.path() + "' from Gitaly's PATH; an absolute path is safer");
        }
        return List.of();
    }
}
