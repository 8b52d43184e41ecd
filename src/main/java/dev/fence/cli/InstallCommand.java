package dev.fence.cli;

import dev.fence.core.FencePolicy;
import dev.fence.hook.HookConfig;
import dev.fence.hookpath.Archives;
import dev.fence.hookpath.JvmSettings;
import dev.fence.install.BareRepoInstaller;
import dev.fence.install.GhesInstaller;
import dev.fence.install.GhesShim;
import dev.fence.install.GitLabInstaller;
import dev.fence.install.HookScripts;
import dev.fence.install.InstallResult;
import dev.fence.install.Launch;
import dev.fence.server.client.FenceClient;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code fence install}: puts the pre-receive hook where a git host runs it, or writes the files an
 * administrator installs. Exactly one mode; see {@code --help}.
 *
 * <p>Built with the process environment ({@code new InstallCommand(env)}), so the root command registers
 * an instance ({@code addSubcommand}) or creates it through a factory that passes the environment.
 * Failures from the installers propagate as fence exceptions for the root's exception mapper
 * ({@code InvalidInputException} → 2, {@code ConfigException} → 6, anything else → 70); a refusal to
 * replace someone else's hook is an outcome, returned here as 6.
 */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "install",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Install fence's pre-receive hook into a bare repository (plain git, Gitea), or write the files a GitLab"
                    + " or GHES administrator installs. Prints what it did and the next steps.",
            "",
            "Exits 6 when it refuses to replace a hook or file fence did not install (rerun with --force) or the"
                    + " environment is wrong (git not on PATH, a file cannot be written); 2 for no mode or two, an"
                    + " option that does not apply to the mode, a path that is not a bare repository or an invalid"
                    + " repo id.",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  fence install --bare /srv/git/app.git --store redis://fence-redis:6379",
            "  fence install --bare /srv/git/app.git --launcher /opt/fence/bin/fence --force",
            "  fence install --gitlab-global /var/opt/gitlab/gitaly/custom_hooks",
            "  fence install --gitlab-tarball custom_hooks.tar",
            "  fence install --ghes ./ghes-fence --store redis://fence-redis.internal:6379",
            "  fence install --ghes ./ghes-fence --shim curl --server https://fence.internal:8700",
            "  fence install --gitlab-global /var/opt/gitlab/gitaly/custom_hooks --shim curl --server http://fence:8700"
        })
final class InstallCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1", heading = "%nMode (exactly one):%n")
    Mode mode;

    static final class Mode {
        @Option(
                names = "--bare",
                paramLabel = "PATH",
                description = "Install hooks/pre-receive (or pre-receive.d/fence when the repo has Gitea's"
                        + " dispatcher) into this bare repository, and set receive.advertisePushOptions and"
                        + " fence.repoId. Also post-receive, unless --no-record-landed.")
        Path bare;

        @Option(
                names = "--gitlab-global",
                paramLabel = "DIR",
                description = "Write DIR/pre-receive.d/" + GitLabInstaller.HOOK_NAME
                        + " for a GitLab global custom_hooks_dir, and print the gitlab.rb lines.")
        Path gitlabGlobal;

        @Option(
                names = "--gitlab-tarball",
                paramLabel = "FILE",
                description = "Write a tarball holding custom_hooks/pre-receive.d/" + GitLabInstaller.HOOK_NAME
                        + " for one project, and print the 'gitaly hooks set' command.")
        Path gitlabTarball;

        @Option(
                names = "--ghes",
                paramLabel = "DIR",
                description = "Write " + GhesInstaller.SCRIPT + ", " + GhesInstaller.DOCKERFILE
                        + " and fence.conf for a GHES pre-receive hook and its hook environment.")
        Path ghes;
    }

    @Option(
            names = "--repo-id",
            paramLabel = "ID",
            description = "--bare: the repo id resources are named after (default: the configured fence.repoId,"
                    + " else the directory name without .git).")
    String repoId;

    @Option(
            names = "--store",
            paramLabel = "URL",
            description = "--bare, --ghes: the store URL to write into fence.conf. On GitLab put it in"
                    + " /etc/fence/fence.conf on every Gitaly node instead.")
    String store;

    @Option(
            names = "--launcher",
            paramLabel = "PATH",
            description = "Run this fence launcher from the hook, on the java that runs this install. Without"
                    + " --launcher or --jar, a --bare hook runs the java and the jar that run this install (by"
                    + " absolute path, whatever the server's PATH holds), starting the JVM itself from the"
                    + " class-data archive of its store's kind (built here) when a launcher is known for that"
                    + " jar ($FENCE_LAUNCHER, or the installation's bin/fence).")
    String launcher;

    @Option(
            names = "--jar",
            paramLabel = "PATH",
            description = "Run java on this fence.jar from the hook (default for GitLab and GHES: "
                    + HookScripts.DEFAULT_JAR + ").")
    String jar;

    @Option(
            names = "--java",
            paramLabel = "PATH",
            description = "The java the hook runs with --jar (default for --bare: the java running this install;"
                    + " GitLab: java; GHES: " + HookScripts.GHES_JAVA + ").")
    String java;

    @Option(
            names = "--shim",
            paramLabel = "KIND",
            defaultValue = "java",
            converter = ShimConverter.class,
            completionCandidates = ShimCandidates.class,
            description = "--ghes, --gitlab-global, --bare: what the hook runs: ${COMPLETION-CANDIDATES} (default:"
                    + " ${DEFAULT-VALUE}). curl writes hooks/pre-receive-curl.sh, a bash + curl shim that asks fence"
                    + " serve for the verdict (no JRE or store access needed), and fence-shim.conf beside it.")
    GhesShim shim;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "--shim curl: the fence.conf fence serve judges with. The shim refuses pushes to its"
                    + " fenced-refs when the server cannot be asked, so this is written into fence-shim.conf"
                    + " (default: the default policy, refs/heads/**).")
    Path config;

    @Option(
            names = "--server",
            paramLabel = "URL",
            description = "The fence serve URL to write into fence-shim.conf; implies --shim curl. The hook"
                    + " credential is never taken from the command line: see --credential-file.")
    String server;

    @Option(
            names = "--credential-file",
            paramLabel = "FILE",
            description = "--shim curl: a file holding the hook credential, <name>:<secret> as 'fence serve"
                    + " credentials add --role hook' prints it, to write into fence-shim.conf (mode 600)."
                    + " Without it, the credential fence-shim.conf already holds is kept.")
    Path credentialFile;

    @Option(
            names = "--force",
            description = "Replace hooks and files fence did not write (keeping <name>.fence-backup).")
    boolean force;

    @Option(
            names = "--record-landed",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "With --bare: also install the post-receive hook (the default; --record-landed is"
                    + " accepted as before). It records each push that landed, and applies what only a landed"
                    + " push may do: a tokenless push supersedes the lease, and a push becomes the last write."
                    + " --no-record-landed saves one JVM start per push; the next push's pre-receive then"
                    + " applies those, so a lease a landed push superseded stays live until then.")
    boolean recordLanded;

    private final Map<String, String> env;

    /** Reads {@link GhesShim#label()} spellings. */
    static final class ShimConverter implements ITypeConverter<GhesShim> {
        @Override
        public GhesShim convert(String value) {
            for (GhesShim s : GhesShim.values()) {
                if (s.label().equals(value)) {
                    return s;
                }
            }
            throw new TypeConversionException("expected one of " + new ShimCandidates() + " but was '" + value + "'");
        }
    }

    /** The {@link GhesShim#label()} spellings, for help and completion. */
    static final class ShimCandidates implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(GhesShim.values()).map(GhesShim::label).iterator();
        }

        @Override
        public String toString() {
            return String.join(", ", this);
        }
    }

    /** @param env the process environment: {@code PATH} (to find git) and {@code FENCE_LAUNCHER} */
    InstallCommand(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    InstallCommand(Context ctx) {
        this(ctx.env());
    }

    @Override
    public Integer call() {
        check(repoId == null || mode.bare != null, "--repo-id applies only to --bare");
        check(
                store == null || mode.bare != null || mode.ghes != null,
                "--store applies to --bare and --ghes; on GitLab put 'store = URL' in /etc/fence/fence.conf on every"
                        + " Gitaly node");
        check(launcher == null || (jar == null && java == null), "give either --launcher or --jar/--java, not both");
        check(java == null || jar != null || mode.bare == null, "--java needs --jar with --bare");
        check(
                mode.gitlabTarball == null
                        || !spec.commandLine().getParseResult().hasMatchedOption("--shim"),
                "--shim applies only to --ghes, --gitlab-global and --bare");
        check(
                mode.gitlabTarball == null || server == null,
                "--server applies only to --ghes, --gitlab-global and --bare");
        if (server != null && !spec.commandLine().getParseResult().hasMatchedOption("--shim")) {
            // A server to ask is what the curl shim is for; the Java hook names its server in fence.conf.
            shim = GhesShim.CURL;
        }
        check(server == null || shim == GhesShim.CURL, "--server applies only with --shim curl");
        check(credentialFile == null || shim == GhesShim.CURL, "--credential-file applies only with --shim curl");
        check(config == null || shim == GhesShim.CURL, "--config applies only with --shim curl");
        check(
                mode.bare == null || shim != GhesShim.CURL || store == null,
                "--store does not apply with --shim curl: the store is fence serve's");
        FencePolicy policy = shim == GhesShim.CURL && config != null
                ? HookConfig.load(null, config).policy()
                : FencePolicy.defaults();
        checkPath("--launcher", launcher);
        checkPath("--jar", jar);
        checkPath("--java", java);
        InstallResult result;
        if (mode.bare != null) {
            Launch launch = bareLaunch();
            if (shim == GhesShim.CURL) {
                return print(new BareRepoInstaller(env)
                                .install(new BareRepoInstaller.Request(
                                        mode.bare,
                                        repoId,
                                        null,
                                        launch,
                                        force,
                                        recordLanded,
                                        new BareRepoInstaller.Shim(server, policy, credential()))))
                        .code();
            }
            result = new BareRepoInstaller(env)
                    .install(new BareRepoInstaller.Request(mode.bare, repoId, store, launch, force, recordLanded));
            ExitCode code = print(result);
            if (result instanceof InstallResult.Installed && launch instanceof Launch.Direct d) {
                buildArchives(d);
            } else if (result instanceof InstallResult.Installed && launch instanceof Launch.Launcher l) {
                buildLaunchersArchive(l);
            }
            return code.code();
        } else if (mode.gitlabGlobal != null) {
            result = new GitLabInstaller()
                    .global(mode.gitlabGlobal, launch(null, "java"), shim, server, credential(), policy, force);
        } else if (mode.gitlabTarball != null) {
            result = new GitLabInstaller().tarball(mode.gitlabTarball, launch(null, "java"), force);
        } else {
            result = new GhesInstaller()
                    .install(
                            mode.ghes,
                            launch(null, HookScripts.GHES_JAVA),
                            shim,
                            store,
                            server,
                            credential(),
                            policy,
                            force);
        }
        return print(result).code();
    }

    /**
     * What a {@code --bare} hook runs. Always the java that runs this install (or {@code --java}), never one
     * looked up when the hook runs: a git server's user often has no {@code fence} or {@code java} on its
     * PATH, and on a local-path remote the hook's environment is the pusher's. With {@code --launcher}, that
     * launcher on this java. Otherwise, from a jar: a {@link Launch.Direct} start from the class-data archive
     * (built here) when a launcher is known for the jar ({@code $FENCE_LAUNCHER}, or {@code bin/fence} of the
     * installation the jar is in), else this java on this jar. Only classes outside a jar (a build tree) leave
     * the hook to find {@code $FENCE_LAUNCHER} or {@code fence} through PATH, with a warning.
     */
    private Launch bareLaunch() {
        Path javaHome = Path.of(System.getProperty("java.home"));
        String thisJava = javaHome.resolve("bin").resolve("java").toString();
        if (launcher != null) {
            return new Launch.Launcher(launcher, thisJava, null);
        } else if (jar != null) {
            return new Launch.JavaJar(java != null ? java : thisJava, jar);
        }
        Path runningJar = Archives.runningJar();
        String known = knownLauncher(runningJar);
        if (runningJar == null) {
            String fromEnv = known != null ? known : env.getOrDefault("FENCE_LAUNCHER", "");
            if (!fromEnv.isEmpty()) {
                checkPath("FENCE_LAUNCHER", fromEnv);
            }
            return new Launch.Launcher(fromEnv.isEmpty() ? "fence" : fromEnv, thisJava, null);
        }
        var version = JvmSettings.releaseVersion(javaHome);
        if (version.isEmpty()) {
            return new Launch.JavaJar(thisJava, runningJar.toString());
        }
        if (known == null) {
            return Launch.JavaJar.pinned(
                    javaHome.toString(), JvmSettings.feature(version.get()), runningJar.toString());
        }
        String storeKind = JvmSettings.storeKind(store);
        Path archive = Archives.location(runningJar, version.get(), storeKind, env);
        if (archive == null) {
            return Launch.JavaJar.pinned(
                    javaHome.toString(), JvmSettings.feature(version.get()), runningJar.toString());
        }
        return new Launch.Direct(
                new Launch.Launcher(known),
                javaHome.toString(),
                version.get(),
                runningJar.toString(),
                storeKind,
                archive.toString());
    }

    /**
     * The launcher for {@code jar}: {@code $FENCE_LAUNCHER} (set by {@code bin/fence}) when it is an
     * executable absolute path, else the {@code bin/fence} of the installation {@code jar} belongs to, where
     * that launcher looks for its jar ({@code lib/fence.jar}, {@code bin/fence.jar}, {@code target/fence.jar}
     * of the sources); null when there is none.
     */
    private String knownLauncher(Path jar) {
        String fromEnv = env.get("FENCE_LAUNCHER");
        if (fromEnv != null && fromEnv.startsWith("/") && Files.isExecutable(Path.of(fromEnv))) {
            return fromEnv;
        }
        if (jar == null) {
            return null;
        }
        Path dir = jar.toAbsolutePath().getParent();
        for (Path candidate :
                new Path[] {dir.resolve("fence"), dir.resolveSibling("bin").resolve("fence")}) {
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return null;
    }

    /**
     * Best effort: builds the archive the hook starts from, and (where the launcher will find it, beside
     * the jar) the archive of all stores the launcher starts fence's other commands from; says what happened.
     */
    private void buildArchives(Launch.Direct d) {
        PrintWriter out = spec.commandLine().getOut();
        Path jarPath = Path.of(d.jar());
        Path all = JvmSettings.archive(jarPath, d.javaVersion(), null);
        if (d.storeKind() != null && Path.of(d.archive()).getParent().equals(all.getParent())) {
            say(out, Archives.buildOnce(d.launcher().path(), null, all, env));
        }
        say(out, Archives.buildOnce(d.launcher().path(), d.storeKind(), Path.of(d.archive()), env));
        out.flush();
    }

    /**
     * Best effort, for a hook that runs {@code launcher}: the archive of all stores beside this jar, where
     * the launcher looks for it, when this user may write there.
     */
    private void buildLaunchersArchive(Launch.Launcher launcher) {
        Path runningJar = Archives.runningJar();
        var version = JvmSettings.releaseVersion(Path.of(System.getProperty("java.home")));
        if (runningJar == null || version.isEmpty()) {
            return;
        }
        Path beside = JvmSettings.archive(runningJar, version.get(), null);
        if (beside.equals(Archives.location(runningJar, version.get(), null, env))) {
            PrintWriter out = spec.commandLine().getOut();
            say(out, Archives.buildOnce(launcher.path(), null, beside, env));
            out.flush();
        }
    }

    private static void say(PrintWriter out, String said) {
        if (said != null) {
            out.println(said);
        }
    }

    /**
     * The hook credential of {@code --credential-file}, checked as the Java hook's client checks its own
     * (never echoed), or null to keep the one fence-shim.conf holds.
     */
    private String credential() {
        if (credentialFile == null) {
            return null;
        }
        return FenceClient.credential(Map.of(FenceClient.CREDENTIAL_FILE_ENV, credentialFile.toString()));
    }

    /** The launch the options ask for, else {@code fallback}, else java on the default jar. */
    private Launch launch(Launch fallback, String defaultJava) {
        if (launcher != null) {
            return new Launch.Launcher(launcher);
        } else if (jar != null) {
            return new Launch.JavaJar(java != null ? java : defaultJava, jar);
        } else if (fallback != null) {
            return fallback;
        }
        return new Launch.JavaJar(java != null ? java : defaultJava, HookScripts.DEFAULT_JAR);
    }

    private ExitCode print(InstallResult result) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (result instanceof InstallResult.Refused refused) {
            err.println("fence install: " + refused.reason());
            err.flush();
            return ExitCode.CONFIG;
        }
        InstallResult.Installed installed = (InstallResult.Installed) result;
        installed.done().forEach(out::println);
        installed.warnings().forEach(w -> out.println("warning: " + w));
        if (!installed.nextSteps().isEmpty()) {
            out.println();
            out.println("Next steps:");
            int n = 1;
            for (String step : installed.nextSteps()) {
                out.println("  " + n++ + ". " + step);
            }
        }
        out.flush();
        return ExitCode.OK;
    }

    /** Hooks run with the repository as working directory: a relative path would resolve there. */
    private void checkPath(String what, String path) {
        check(
                path == null || path.indexOf('/') < 0 || path.startsWith("/"),
                what + " '" + path + "' must be an absolute path, or a bare command name found through PATH");
    }

    private void check(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }
}
