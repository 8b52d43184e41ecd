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
                        + " fence.repoId. With --record-landed, also post-receive.")
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
            description = "Run this fence launcher from the hook (default for --bare: $FENCE_LAUNCHER, else"
                    + " 'fence' from PATH). Without --launcher, a --bare hook installed through the launcher"
                    + " starts the JVM itself, from the class-data archive of its store's kind (built here),"
                    + " while that archive is current, and runs the launcher otherwise.")
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
            description = "The java the hook runs with --jar (default: java; for GHES " + HookScripts.GHES_JAVA + ").")
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
            description = "--shim curl: the fence serve URL to write into fence-shim.conf. The hook credential is"
                    + " never taken from the command line: add it to that file.")
    String server;

    @Option(
            names = "--force",
            description = "Replace hooks and files fence did not write (keeping <name>.fence-backup).")
    boolean force;

    @Option(
            names = "--record-landed",
            description = "With --bare: also install a post-receive hook that records each push that landed"
                    + " (costs one more JVM start per push; the pre-receive ledger already records admissions).")
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
        check(server == null || shim == GhesShim.CURL, "--server applies only with --shim curl");
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
            String fromEnv = env.get("FENCE_LAUNCHER");
            if (fromEnv == null || fromEnv.isEmpty()) {
                fromEnv = "fence";
            } else if (launcher == null && jar == null) {
                checkPath("FENCE_LAUNCHER", fromEnv);
            }
            Launch launch = launch(new Launch.Launcher(fromEnv), "java");
            if (launcher == null && jar == null && launch instanceof Launch.Launcher l) {
                launch = direct(l, JvmSettings.storeKind(store));
            }
            if (shim == GhesShim.CURL) {
                return print(new BareRepoInstaller(env)
                                .install(new BareRepoInstaller.Request(
                                        mode.bare,
                                        repoId,
                                        null,
                                        launch,
                                        force,
                                        recordLanded,
                                        new BareRepoInstaller.Shim(server, policy))))
                        .code();
            }
            result = new BareRepoInstaller(env)
                    .install(new BareRepoInstaller.Request(mode.bare, repoId, store, launch, force, recordLanded));
            ExitCode code = print(result);
            if (result instanceof InstallResult.Installed && launch instanceof Launch.Launcher l) {
                buildArchiveOnce(l.path(), null);
            } else if (result instanceof InstallResult.Installed && launch instanceof Launch.Direct d) {
                buildArchiveOnce(d.launcher().path(), null);
                if (d.storeKind() != null) {
                    buildArchiveOnce(d.launcher().path(), d.storeKind());
                }
            }
            return code.code();
        } else if (mode.gitlabGlobal != null) {
            result = new GitLabInstaller().global(mode.gitlabGlobal, launch(null, "java"), shim, server, policy, force);
        } else if (mode.gitlabTarball != null) {
            result = new GitLabInstaller().tarball(mode.gitlabTarball, launch(null, "java"), force);
        } else {
            result = new GhesInstaller()
                    .install(mode.ghes, launch(null, HookScripts.GHES_JAVA), shim, store, server, policy, force);
        }
        return print(result).code();
    }

    /**
     * The hook's launch when this process was started by {@code launcher} from its jar: a {@link
     * Launch.Direct} start for this JVM's JDK, which each push then saves the launcher's process on; else
     * {@code launcher} itself (a launcher found through PATH, classes not in a jar, a JDK without a release
     * file).
     *
     * @param storeKind the kind of store the hook is installed with (its archive is trained on that store),
     *     or null
     */
    private static Launch direct(Launch.Launcher launcher, String storeKind) {
        Path launcherFile = Path.of(launcher.path());
        Path jar = Archives.runningJar();
        Path javaHome = Path.of(System.getProperty("java.home"));
        var version = JvmSettings.releaseVersion(javaHome);
        if (!launcherFile.isAbsolute() || !Files.isExecutable(launcherFile) || jar == null || version.isEmpty()) {
            return launcher;
        }
        return new Launch.Direct(launcher, javaHome.toString(), version.get(), jar.toString(), storeKind);
    }

    /**
     * Best effort: makes sure the archive a hook run through {@code launcherPath} starts from is built (see
     * {@link Archives#buildOnce}), and says what happened.
     */
    private void buildArchiveOnce(String launcherPath, String storeKind) {
        PrintWriter out = spec.commandLine().getOut();
        String said = Archives.buildOnce(launcherPath, storeKind, env);
        if (said != null) {
            out.println(said);
        }
        out.flush();
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
