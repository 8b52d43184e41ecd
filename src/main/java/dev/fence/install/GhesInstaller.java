package dev.fence.install;

import dev.fence.core.ConfigException;
import dev.fence.core.FencePolicy;
import dev.fence.core.InvalidInputException;
import dev.fence.hook.HookConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes the two artefacts a GitHub Enterprise Server pre-receive hook needs, into one directory:
 *
 * <ul>
 *   <li>{@value #SCRIPT}, the script an administrator commits to a hook repository;
 *   <li>{@value #DOCKERFILE}, the recipe for the hook environment it runs in: a linux/amd64 chroot with a
 *       JRE, fence.jar and {@code fence.conf}, exported with {@code docker export | gzip}. GHES's default
 *       environment has no Java.
 * </ul>
 *
 * <p>Plus {@code fence.conf} for the image: the store URL when given, else a placeholder to fill in (an
 * existing {@code fence.conf} is kept when no store is given).
 */
public final class GhesInstaller {
    /** The hook script's file name. */
    public static final String SCRIPT = "fence-pre-receive.sh";

    /** The hook-environment recipe's file name. */
    public static final String DOCKERFILE = "Dockerfile.hook-env";

    /**
     * Writes {@link #SCRIPT}, {@link #DOCKERFILE} and {@code fence.conf} into {@code dir}.
     *
     * @param dir the output directory, created if missing
     * @param launch how the script starts fence inside the hook environment
     * @param shim which kind of script to write
     * @param store the store URL for {@code fence.conf}, or null for a placeholder
     * @param force replace files there that fence did not write
     * @throws InvalidInputException when {@code dir} exists and is not a directory
     * @throws ConfigException when a file cannot be written
     */
    public InstallResult install(Path dir, Launch launch, GhesShim shim, String store, boolean force) {
        return install(dir, launch, shim, store, null, force);
    }

    /**
     * As {@link #install(Path, Launch, GhesShim, String, boolean)}; for {@link GhesShim#CURL} writes the
     * curl shim as {@link #SCRIPT} and {@link HookScripts#SHIM_CONF} beside it (no hook environment is
     * needed: GHES's default one has bash and curl).
     *
     * @param server the {@code fence serve} URL for the shim's configuration, or null for a placeholder
     */
    public InstallResult install(Path dir, Launch launch, GhesShim shim, String store, String server, boolean force) {
        return install(dir, launch, shim, store, server, null, FencePolicy.defaults(), force);
    }

    /**
     * As {@link #install(Path, Launch, GhesShim, String, String, boolean)}.
     *
     * @param credential the hook credential for the shim's configuration, or null to keep the one there
     * @param policy the policy fence serve judges with: the curl shim refuses its fenced refs when the
     *     server cannot be asked ({@link ShimSettings})
     */
    public InstallResult install(
            Path dir,
            Launch launch,
            GhesShim shim,
            String store,
            String server,
            String credential,
            FencePolicy policy,
            boolean force) {
        Path out = dir.toAbsolutePath().normalize();
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new InvalidInputException("--ghes " + out + ": exists and is not a directory");
        }
        if (shim == GhesShim.CURL) {
            return curl(out, server, credential, policy, force);
        }
        String script =
                switch (shim) {
                    case JAVA -> HookScripts.ghesPreReceive(launch);
                    case CURL -> throw new IllegalStateException("handled above");
                };
        Path conf = out.resolve(HookConfig.REPO_FILE_NAME);
        FilePlan plan = new FilePlan()
                .add(out.resolve(SCRIPT), script, FilePlan.EXECUTABLE)
                .add(out.resolve(DOCKERFILE), HookScripts.ghesDockerfile(), FilePlan.READABLE);
        boolean keepConf = store == null && Files.exists(conf);
        if (!keepConf) {
            plan.add(conf, HookScripts.ghesFenceConf(store), FilePlan.PRIVATE);
        }
        Written w = write(plan, out, force, keepConf ? "kept " + conf + " (no --store given)" : null);
        if (w.refused() != null) {
            return w.refused();
        }
        return new InstallResult.Installed(w.done(), warnings(launch, store, keepConf), nextSteps(out, launch));
    }

    /** What {@link #write} did: refused (nothing written), or the files written. */
    private record Written(InstallResult.Refused refused, List<String> done) {}

    /**
     * Writes {@code plan} into {@code out}, unless it would replace files fence did not write and {@code
     * force} is not given.
     *
     * @param keptNote the line that says a configuration file was kept, or null
     */
    private static Written write(FilePlan plan, Path out, boolean force, String keptNote) {
        InstallResult.Refused refused = force ? null : plan.refusal();
        if (refused != null) {
            return new Written(refused, List.of());
        }
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            throw new ConfigException("cannot create " + out + ": " + e, e);
        }
        List<String> done = new ArrayList<>(plan.write());
        if (keptNote != null) {
            done.add(keptNote);
        }
        return new Written(null, done);
    }

    private InstallResult curl(Path out, String server, String credential, FencePolicy policy, boolean force) {
        Path conf = out.resolve(HookScripts.SHIM_CONF);
        FilePlan plan = new FilePlan().add(out.resolve(SCRIPT), HookScripts.curlShim(), FilePlan.EXECUTABLE);
        server = ShimSettings.serverFor(conf, server);
        plan.add(
                conf,
                new ShimSettings(policy, null, "GITHUB_REPO_NAME").confFor(conf, server, credential),
                FilePlan.PRIVATE);
        Written w = write(plan, out, force, null);
        if (w.refused() != null) {
            return w.refused();
        }
        List<String> done = w.done();
        List<String> warnings = new ArrayList<>();
        if (server == null) {
            warnings.add(HookScripts.SHIM_CONF + " has no FENCE_SERVER yet: set it before enabling the hook");
        }
        List<String> steps = new ArrayList<>(ShimSettings.credentialStep(conf, "ghes"));
        steps.addAll(List.of(
                "Commit " + SCRIPT + " (executable: git add --chmod=+x " + SCRIPT + ") and "
                        + HookScripts.SHIM_CONF + " to the default branch of a private hook repository that"
                        + " only administrators can read: the conf holds the credential.",
                "Enterprise > Settings > Hooks > Add pre-receive hook: that repository and " + SCRIPT
                        + ", the default environment (bash and curl suffice); start in testing mode.",
                "The shim spends at most FENCE_SHIM_BUDGET (default 3 s) of the 5 s GHES gives all hooks;"
                        + " when the server cannot be asked it refuses every push to a fenced ref (the"
                        + " fenced-refs of --config, written into " + HookScripts.SHIM_CONF + ").",
                "Check the appliance can reach the server: a push with -o fence=1 must be FENCED, not accepted."));
        return new InstallResult.Installed(done, warnings, steps);
    }

    private static List<String> warnings(Launch launch, String store, boolean keptConf) {
        List<String> warnings = new ArrayList<>();
        if (store == null && !keptConf) {
            warnings.add("fence.conf has no store yet: set 'store = URL' in it before building the environment");
        }
        if (launch instanceof Launch.JavaJar j
                && (!j.java().equals(HookScripts.GHES_JAVA) || !j.jar().equals(HookScripts.DEFAULT_JAR))) {
            warnings.add("the script runs " + j.java() + " on " + j.jar() + ", but " + DOCKERFILE + " puts java at "
                    + HookScripts.GHES_JAVA + " and the jar at " + HookScripts.DEFAULT_JAR + "; edit one to match");
        }
        return warnings;
    }

    private static List<String> nextSteps(Path out, Launch launch) {
        return List.of(
                "Copy fence.jar (target/fence.jar of the fence build) into " + out + ".",
                "Build and export the hook environment (needs Docker; the image is linux/amd64):\n"
                        + "    cd " + out + "\n"
                        + "    docker build --platform linux/amd64 -f " + DOCKERFILE + " -t fence-hook-env .\n"
                        + "    docker create --name fence-hook-env fence-hook-env /bin/true\n"
                        + "    docker export fence-hook-env | gzip > fence-hook-env.tar.gz\n"
                        + "    docker rm fence-hook-env",
                "Upload it: copy fence-hook-env.tar.gz to the appliance (scp -P 122 … admin@HOST:) and run\n"
                        + "    ghe-hook-env-create fence /home/admin/fence-hook-env.tar.gz\n"
                        + "  or add it by URL under Enterprise > Settings > Hooks > Manage environments.",
                "Commit " + SCRIPT + " to the default branch of a hook repository (e.g. org/ghes-hooks), executable:"
                        + " git add --chmod=+x " + SCRIPT + ".",
                "Enterprise > Settings > Hooks > Add pre-receive hook: the hook repository and " + SCRIPT
                        + ", environment 'fence'; start in testing mode (exit status not enforced), then enforce.",
                "Mind the budget: GHES gives all pre-receive hooks of a push 5 seconds together and rejects the push"
                        + " on timeout even in testing mode. JVM start-up plus the store round trip must fit with the"
                        + " other hooks; fence's store-timeout is at most 4s.",
                "Verify on your GHES version that GIT_PUSH_OPTION_* reaches the hook (git push -o fence=1 should be"
                        + " FENCED, not accepted as tokenless) and that the chroot can reach the store.",
                "Launch used by the script: " + launch.command("hook", "pre-receive"));
    }
}
