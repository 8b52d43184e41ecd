package dev.fence.doctor;

import dev.fence.core.ConfigException;
import dev.fence.git.Git;
import dev.fence.hook.HookConfig;
import dev.fence.hookpath.Archives;
import dev.fence.hookpath.JvmSettings;
import dev.fence.install.HookScripts;
import dev.fence.install.InstalledHooks;
import dev.fence.install.Launch;
import dev.fence.store.StoreOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code fence doctor --repo}: a bare repository on the git host, as its hooks see it. Which user they run
 * as ({@code hook.user}), whether push options reach them ({@code git.push-options}), whether the hook files
 * fence wrote are what {@code fence install} writes today ({@code hook.pre-receive}, {@code
 * hook.post-receive}), whether the class-data archive the hook starts from is current for its JDK and jar
 * ({@code hook.archive}), whether the hooks' user can read their configuration ({@code hook.config}), and
 * then the store that configuration names, judged for the hooks' user ({@link StoreChecks}), or {@code
 * hook.store} when there is none to judge here.
 */
public final class RepoChecks implements Check {
    static final String HOOK_USER = "hook.user";
    static final String PUSH_OPTIONS = "git.push-options";
    static final String ARCHIVE = "hook.archive";
    static final String CONFIG = "hook.config";
    static final String STORE = "hook.store";

    private final Path repo;
    private final Git git;
    private final String hookUserName;
    private final String storeOverride;
    private final StoreOptions options;
    private final Clock clock;
    private final UserPrincipal user;
    private final Map<String, String> env;

    /**
     * @param repo the bare repository
     * @param env the environment git and the launcher see ({@code PATH}, {@code HOME}, {@code FENCE_LAUNCHER})
     * @param hookUserName the user the hooks run as, or null for the repository's owner
     * @param storeOverride the store to judge instead of the one the hook's configuration names, or null
     * @param user the user running the check, or null when it cannot be told
     */
    public RepoChecks(
            Path repo,
            Map<String, String> env,
            String hookUserName,
            String storeOverride,
            StoreOptions options,
            Clock clock,
            UserPrincipal user) {
        this.repo = repo.toAbsolutePath().normalize();
        this.env = Map.copyOf(env);
        this.git = new Git(env);
        this.hookUserName = hookUserName;
        this.storeOverride = storeOverride;
        this.options = options;
        this.clock = clock;
        this.user = user;
    }

    @Override
    public String name() {
        return "repo";
    }

    @Override
    public List<Finding> run() {
        List<Finding> out = new ArrayList<>();
        Git.Result bare = git.run(repo, "--git-dir=" + repo, "rev-parse", "--is-bare-repository");
        if (bare.exit() != 0 || !Git.chomp(bare.stdout()).equals("true")) {
            out.add(
                    Finding.fail(
                            "repo",
                            repo + " is not a bare git repository",
                            "point --repo at the repository's directory on the git host (the one fence install --bare was given)"));
            return out;
        }
        Account hook = hookUser(out);
        out.add(pushOptions());
        Path hooks = repo.resolve(git.check(repo, "--git-dir=" + repo, "rev-parse", "--git-path", "hooks"))
                .normalize();
        Optional<Launch> launch = Optional.empty();
        boolean shim = false;
        Path preReceive = null;
        for (String name : InstalledHooks.HOOKS) {
            Optional<Path> file = InstalledHooks.locate(hooks, name);
            out.add(hookFile(name, hooks, file));
            if (name.equals("pre-receive") && file.isPresent()) {
                String content = read(file.get());
                shim = InstalledHooks.isShim(content);
                launch = InstalledHooks.launch(name, content);
                preReceive = file.get();
            }
        }
        out.add(archive(launch, shim, hook));
        if (shim) {
            // The shim reads its settings, the hook credential among them, from the file beside it.
            out.add(readable(
                    preReceive.resolveSibling(HookScripts.SHIM_CONF), hook, "the shim cannot ask fence serve"));
            return out;
        }
        HookConfig config;
        try {
            config = HookConfig.load(repo, null);
        } catch (ConfigException e) {
            out.add(Finding.fail(CONFIG, e.getMessage(), "fix the file as the message says"));
            return out;
        }
        out.add(configFile(config, hook));
        store(config, hook, out);
        return out;
    }

    /** The hooks' user: named, else the repository's owner (git runs receive-pack, and so the hooks, as it). */
    private Account hookUser(List<Finding> out) {
        String name = hookUserName;
        String why = "named by --hook-user";
        if (name == null) {
            try {
                name = Files.getOwner(repo).getName();
                why = "the owner of " + repo + "; name another with --hook-user";
            } catch (IOException | UnsupportedOperationException e) {
                out.add(Finding.warn(
                        HOOK_USER,
                        "the owner of " + repo + " cannot be read: files are judged for the user running fence doctor",
                        "name the user the git server runs hooks as with --hook-user"));
                return null;
            }
        }
        Optional<Account> account = Account.lookup(name);
        if (account.isEmpty()) {
            out.add(Finding.warn(
                    HOOK_USER,
                    "no account " + name + " in /etc/passwd: files are judged for the user running fence doctor",
                    "name the user the git server runs hooks as with --hook-user"));
            return null;
        }
        out.add(Finding.ok(HOOK_USER, "the hooks run as " + name + " (" + why + ")"));
        return account.get();
    }

    private Finding pushOptions() {
        Git.Result r = git.run(
                repo,
                "--git-dir=" + repo,
                "config",
                "--show-origin",
                "--type=bool",
                "--get",
                "receive.advertisePushOptions");
        String fix =
                "git --git-dir=" + repo + " config receive.advertisePushOptions true (fence install --bare sets it)";
        String out = Git.chomp(r.stdout());
        int tab = out.lastIndexOf('\t');
        String value = tab >= 0 ? out.substring(tab + 1) : out;
        String origin = tab >= 0 ? out.substring(0, tab) : "";
        if (r.exit() == 0 && value.equals("true")) {
            return Finding.ok(
                    PUSH_OPTIONS, "receive.advertisePushOptions true (" + origin + "): push options reach the hook");
        }
        String why = ": git push -o fails ('the receiving end does not support push options'), so no push can carry"
                + " a token or proof and every lease holder's push is refused";
        if (r.exit() == 0) {
            return Finding.fail(
                    PUSH_OPTIONS, "receive.advertisePushOptions is " + value + " (" + origin + ")" + why, fix);
        }
        if (r.exit() == 1) {
            return Finding.fail(
                    PUSH_OPTIONS,
                    "receive.advertisePushOptions is set in neither the repository's nor the global or system git config"
                            + why,
                    fix);
        }
        return Finding.fail(
                PUSH_OPTIONS, "git config could not be read: " + r.stderr().strip(), fix);
    }

    private Finding hookFile(String name, Path hooks, Optional<Path> found) {
        String check = "hook." + name;
        String reinstall = "rerun fence install --bare " + repo
                + " as it was installed (it rewrites fence's own hook files); keep local checks in another hook";
        if (found.isEmpty()) {
            return name.equals("pre-receive")
                    ? Finding.fail(
                            check,
                            "no pre-receive hook written by fence in " + hooks + ": pushes here are not fenced",
                            "fence install --bare " + repo + " --store URL")
                    : Finding.ok(
                            check,
                            "not installed: landed pushes are not recorded (fence install --bare --record-landed adds it)");
        }
        Path file = found.get();
        String content = read(file);
        Optional<String> expected = InstalledHooks.expected(name, content);
        if (expected.isEmpty()) {
            return Finding.fail(
                    check,
                    file + " carries fence's marker but does not start fence the way fence install writes it: a push"
                            + " may skip the fence",
                    reinstall);
        }
        if (!expected.get().equals(content)) {
            return Finding.fail(
                    check,
                    file + " differs from what fence install writes today (edited, or written by another fence"
                            + " version), first at " + firstDifference(expected.get(), content),
                    reinstall);
        }
        if (!Files.isExecutable(file)) {
            return Finding.fail(
                    check, file + " is not executable: git skips it, so pushes are not fenced", "chmod 755 " + file);
        }
        if (writableByOthers(file)) {
            return Finding.fail(
                    check,
                    file + " is writable by others" + modes(file) + ": anyone on this host can make it let every"
                            + " push through",
                    "chmod go-w " + file);
        }
        return Finding.ok(check, file + " is intact: byte for byte what fence install writes today");
    }

    private static String firstDifference(String expected, String actual) {
        String[] e = expected.split("\n", -1);
        String[] a = actual.split("\n", -1);
        for (int i = 0; i < Math.max(e.length, a.length); i++) {
            String want = i < e.length ? e[i] : null;
            String got = i < a.length ? a[i] : null;
            if (want == null || !want.equals(got)) {
                return "line " + (i + 1) + ": " + (got == null ? "(missing)" : "'" + cut(got) + "'")
                        + (want == null ? " (not in fence's)" : ", fence writes '" + cut(want) + "'");
            }
        }
        return "the end of the file";
    }

    private Finding archive(Optional<Launch> launch, boolean shim, Account hook) {
        if (shim) {
            return Finding.ok(ARCHIVE, "the curl shim starts no JVM: no class-data archive applies");
        }
        if (launch.isEmpty()) {
            return Finding.ok(ARCHIVE, "not judged: no pre-receive hook of fence's to read the JVM start from");
        }
        if (launch.get() instanceof Launch.JavaJar j) {
            return Finding.ok(ARCHIVE, "the hook runs " + j.java() + " -jar with the JDK's own class-data archive");
        }
        if (launch.get() instanceof Launch.Direct d) {
            Path javaHome = Path.of(d.javaHome());
            Optional<String> now = JvmSettings.releaseVersion(javaHome);
            String rebuild =
                    d.launcher().path() + " --build-archive" + (d.storeKind() == null ? "" : " " + d.storeKind());
            if (now.isEmpty() || !now.get().equals(d.javaVersion())) {
                return Finding.warn(
                        ARCHIVE,
                        "the hook was installed for the JDK " + d.javaVersion() + " at " + javaHome + ", which is now "
                                + now.orElse("gone") + ": every push starts through the launcher, slower",
                        "rerun fence install --bare " + repo + " with "
                                + d.launcher().path() + " (it pins the JDK now installed and builds its archive)");
            }
            return judge(Path.of(d.archive()), Path.of(d.jar()), d.javaVersion(), rebuild, hook);
        }
        Launch.Launcher l = (Launch.Launcher) launch.get();
        if (l.viaPath()) {
            return Finding.warn(
                    ARCHIVE,
                    "the hook runs '" + l.path() + "' from the PATH of git's server process: which fence, JDK and"
                            + " archive a push gets is not known here",
                    "fence install --bare " + repo + " --launcher /path/to/fence/bin/fence, to pin the launcher");
        }
        Path jar = Archives.runningJar();
        String mine = env.get("FENCE_LAUNCHER");
        Optional<String> version = JvmSettings.releaseVersion(Path.of(System.getProperty("java.home")));
        if (jar == null || version.isEmpty() || !l.path().equals(mine)) {
            return Finding.ok(
                    ARCHIVE,
                    "not judged: the hook starts fence through " + l.path() + ", which picks its JDK and jar at each"
                            + " push; run fence doctor through that launcher to judge its archive");
        }
        return judge(JvmSettings.archive(jar, version.get()), jar, version.get(), l.path() + " --build-archive", hook);
    }

    /** The JVM uses {@code archive} only when it is newer than {@code jar} (the launcher's {@code -nt}). */
    private static Finding judge(Path archive, Path jar, String version, String rebuild, Account hook) {
        try {
            if (!Files.exists(archive)) {
                return Finding.warn(
                        ARCHIVE,
                        archive + " does not exist: pushes work, but each starts its JVM without fence's archive",
                        rebuild);
            }
            if (Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) <= 0) {
                return Finding.warn(
                        ARCHIVE,
                        archive + " is older than " + jar + " (made for another build of the jar): the JVM is not"
                                + " pointed at it, so pushes start slower",
                        rebuild);
            }
        } catch (IOException e) {
            return Finding.warn(ARCHIVE, "cannot read " + archive + " or " + jar + ": " + e.getMessage(), rebuild);
        }
        if (hook != null && !hook.canRead(archive)) {
            return Finding.warn(
                    ARCHIVE,
                    archive + " is not readable by " + hook.name() + modes(archive)
                            + ": the hooks' JVM starts without it",
                    "chmod a+r " + archive);
        }
        return Finding.ok(ARCHIVE, archive + " is current for JDK " + version + " and " + jar);
    }

    private Finding configFile(HookConfig config, Account hook) {
        if (config.file().isEmpty()) {
            return Finding.ok(
                    CONFIG,
                    "no " + repo.resolve(HookConfig.REPO_FILE_NAME) + " and no " + HookConfig.SYSTEM_FILE_NAME
                            + ": the hook runs on the defaults");
        }
        return readable(config.file().get(), hook, "the hook cannot load its configuration");
    }

    /** {@code file}, which the hook must read, judged for the hooks' user. */
    private static Finding readable(Path file, Account hook, String otherwise) {
        if (!Files.exists(file)) {
            return Finding.fail(
                    CONFIG,
                    file + " does not exist: " + otherwise + ", so every push to a fenced ref is refused",
                    "rerun fence install --bare with the options it was installed with");
        }
        boolean readable = hook != null ? hook.canRead(file) : Files.isReadable(file);
        if (!readable) {
            String who = hook != null ? hook.name() : "this user";
            return Finding.fail(
                    CONFIG,
                    who + " cannot read " + file + modes(file) + ": " + otherwise
                            + ", so every push to a fenced ref is refused",
                    "chown " + (hook != null ? hook.name() : "<hook user>") + " " + file
                            + " (keep it mode 600: it may hold a password or credential)");
        }
        return Finding.ok(
                CONFIG, file + " is read by the hook" + (hook != null ? " and readable by " + hook.name() : ""));
    }

    private void store(HookConfig config, Account hook, List<Finding> out) {
        String url = storeOverride != null ? storeOverride : config.store().orElse(null);
        if (url == null) {
            if (config.server().isPresent()) {
                out.add(Finding.ok(
                        STORE,
                        "the hook asks fence serve"
                                + config.server().map(s -> " at " + s).orElse("")
                                + ": the store is the server's (run fence doctor where it runs)"));
            } else {
                out.add(Finding.fail(
                        STORE,
                        "the hook's configuration names no store: every push to a fenced ref is refused",
                        "fence install --bare " + repo + " --store URL, or 'store = URL' in "
                                + HookConfig.SYSTEM_FILE_NAME));
            }
            return;
        }
        out.addAll(StoreChecks.all(url, options, clock, user, hook).run());
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** Whether users other than the owner and group may write {@code file} (false when that cannot be read). */
    private static boolean writableByOthers(Path file) {
        try {
            return Files.getPosixFilePermissions(file).contains(PosixFilePermission.OTHERS_WRITE);
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** {@code " (owned by …, mode …)"}, or nothing when that cannot be read. */
    private static String modes(Path file) {
        String m = Account.describe(file);
        return m == null ? "" : " (" + m + ")";
    }

    /** A line of a file, short enough for a one-line finding. */
    private static String cut(String line) {
        String l = line.strip();
        return l.length() > 80 ? l.substring(0, 77) + "..." : l;
    }
}
