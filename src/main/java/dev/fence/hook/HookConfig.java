package dev.fence.hook;

import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.FencePolicy;
import dev.fence.core.FencePolicy.PusherRule;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.core.Printable;
import dev.fence.core.PusherPolicy;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The pre-receive hook's configuration: one file of {@code key = value} lines. Nothing is taken from the
 * environment: on a local-path remote the hook runs in the pusher's own environment, so a setting read
 * from there would be the pusher's to choose (see the README's "Trust model").
 *
 * <h2>File format</h2>
 *
 * UTF-8 text, one {@code key = value} per line; whitespace around key and value is ignored; blank lines
 * and lines whose first non-blank character is {@code #} are comments ({@code #} later in a line is part
 * of the value, since URLs and passwords may contain it). Keys are case-sensitive; an unknown key, a key
 * given twice or a bad value is a {@link ConfigException} naming file, line and key. A commented example
 * of every key is {@code gitlab-config/fence.conf.example}.
 *
 * <h2>Keys</h2>
 *
 * <table>
 *   <caption>Configuration keys</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code store}</td><td>none</td><td>store URL, e.g. {@code redis://host:6379} or {@code
 *       sqlite:/var/lib/fence/fence.db}; never echoed in messages</td></tr>
 *   <tr><td>{@code server}</td><td>none</td><td>{@code fence serve} URL ({@code http}/{@code https}), for
 *       hooks that ask a server instead of the store</td></tr>
 *   <tr><td>{@code fenced-refs}</td><td>{@code refs/heads/**}</td><td>comma-separated globs of fenced full
 *       ref names, each starting {@code refs/}</td></tr>
 *   <tr><td>{@code pusher-policy.default}</td><td>{@code bump}</td><td>policy for tokenless pushes:
 *       {@code bump}, {@code bump-force}, {@code reject}, {@code allow}</td></tr>
 *   <tr><td>{@code pusher-policy.<glob>}</td><td>none</td><td>policy for pushers matching the glob; rules
 *       are tried in file order, the first match wins</td></tr>
 *   <tr><td>{@code agent-pushers}</td><td>none</td><td>comma-separated globs of pushers that always need a
 *       token</td></tr>
 *   <tr><td>{@code on-store-down}</td><td>{@code accept}</td><td>{@code accept} or {@code reject} tokenless
 *       pushes when the store is unreachable (pushes with a token always fail closed; a hook whose server
 *       cannot be asked rejects every fenced ref whatever this says)</td></tr>
 *   <tr><td>{@code store-timeout}</td><td>{@code 2s}</td><td>longest wait for the store, {@code ms} or
 *       {@code s}; at most {@code 4s}, since GHES allows all of a push's hooks 5 s together</td></tr>
 *   <tr><td>{@code repo-id}</td><td>none</td><td>plain git only: the repo id to use instead of {@code
 *       fence.repoId} from git config or the directory name</td></tr>
 *   <tr><td>{@code git}</td><td>{@code git}</td><td>the git binary the hook asks about ancestry and
 *       symbolic refs: an absolute path, or {@code git} for the one on the hook's {@code PATH}</td></tr>
 *   <tr><td>{@code pusher-variables}</td><td>{@code GL_USER, REMOTE_USER, USER, LOGNAME}</td><td>plain git
 *       only: the environment variables that name the pusher, comma-separated, tried in order (the first
 *       set one wins): gitolite's {@code GL_USER} comes first because gitolite runs every push as one
 *       shared account; an ssh forced-command set-up names the variable its command sets</td></tr>
 * </table>
 *
 * <h2>Which file</h2>
 *
 * The first that applies: the {@code --config} option (must exist; the installed hook's command line);
 * {@code <GIT_DIR>/fence.conf} if present; {@value #SYSTEM_FILE_NAME} if present; else no file (defaults
 * only). Files are not layered: exactly one is read.
 *
 * @param policy the fence policy built from the file and defaults
 * @param store the store URL, when configured
 * @param server the {@code fence serve} URL, when configured
 * @param repoId the plain-git repo id override, when configured
 * @param file the file that was read, if any
 * @param git the git binary to run
 * @param pusherVariables plain git: the variables naming the pusher, in the order they are tried
 */
public record HookConfig(
        FencePolicy policy,
        Optional<String> store,
        Optional<String> server,
        Optional<String> repoId,
        Optional<Path> file,
        String git,
        List<String> pusherVariables) {

    /** The system-wide configuration file, read when neither the option nor the repository has one. */
    public static final String SYSTEM_FILE_NAME = "/etc/fence/fence.conf";

    /**
     * The git config key ({@code <GIT_DIR>/config}) {@code fence install --bare} sets to {@code true} when
     * it installs the Java post-receive hook beside pre-receive: the hooks then apply what only a landed
     * push may do when it lands ({@link dev.fence.core.Landings}).
     */
    public static final String RECORD_LANDED_KEY = "fence.recordLanded";

    /** The configuration file's name inside a repository's git directory. */
    public static final String REPO_FILE_NAME = "fence.conf";

    /** Longest {@code store-timeout} accepted: GHES gives all of a push's hooks 5 s together. */
    public static final Duration MAX_STORE_TIMEOUT = Duration.ofSeconds(4);

    /** Key prefix of per-pusher policy rules. */
    public static final String PUSHER_POLICY_PREFIX = "pusher-policy.";

    /** Key prefix of holder-to-pusher rules: {@code holder-pushers.<holder-glob> = <pusher-glob>}. */
    public static final String HOLDER_PUSHERS_PREFIX = "holder-pushers.";

    /** Every fixed key (pusher-policy rules come on top), in documentation order. */
    public static final List<String> KEYS = List.of(
            "store",
            "server",
            "fenced-refs",
            "pusher-policy.default",
            "agent-pushers",
            "on-store-down",
            "store-timeout",
            "repo-id",
            "git",
            "pusher-variables");

    /** The {@code git} key's default: the git binary on the hook's {@code PATH}. */
    public static final String DEFAULT_GIT = "git";

    /**
     * The {@code pusher-variables} default: gitolite's {@code GL_USER} (gitolite leaves {@code USER} as its
     * one shared account), a web server's {@code REMOTE_USER}, then the account's {@code USER} and {@code
     * LOGNAME}.
     */
    public static final List<String> DEFAULT_PUSHER_VARIABLES = List.of("GL_USER", "REMOTE_USER", "USER", "LOGNAME");

    public HookConfig {
        if (policy == null
                || store == null
                || server == null
                || repoId == null
                || file == null
                || git == null
                || pusherVariables == null) {
            throw new NullPointerException("HookConfig components must not be null (use Optional.empty())");
        }
        if (pusherVariables.isEmpty()) {
            throw new IllegalArgumentException("pusherVariables must name at least one variable");
        }
        pusherVariables = List.copyOf(pusherVariables);
    }

    /** A configuration with the default {@link #DEFAULT_PUSHER_VARIABLES}. */
    public HookConfig(
            FencePolicy policy,
            Optional<String> store,
            Optional<String> server,
            Optional<String> repoId,
            Optional<Path> file,
            String git) {
        this(policy, store, server, repoId, file, git, DEFAULT_PUSHER_VARIABLES);
    }

    /** This configuration with the plain-git repo id {@code id} instead of its own. */
    public HookConfig withRepoId(String id) {
        return new HookConfig(policy, store, server, Optional.of(id), file, git, pusherVariables);
    }

    /** A configuration that runs the git binary on the hook's {@code PATH}. */
    public HookConfig(
            FencePolicy policy,
            Optional<String> store,
            Optional<String> server,
            Optional<String> repoId,
            Optional<Path> file) {
        this(policy, store, server, repoId, file, DEFAULT_GIT);
    }

    /**
     * As {@link #load(Path, Path, Path)} with the system file {@value #SYSTEM_FILE_NAME}.
     *
     * @throws ConfigException naming the file, line and key of the first problem
     */
    public static HookConfig load(Path gitDir, Path configOption) {
        return load(gitDir, configOption, Path.of(SYSTEM_FILE_NAME));
    }

    /**
     * Finds, reads and checks the configuration. No environment variable is read (see the class comment).
     *
     * @param gitDir the repository's git directory, or null when unknown
     * @param configOption the {@code --config} option, or null
     * @param systemFile the system-wide file to fall back to, or null for none
     * @throws ConfigException naming the file, line and key of the first problem
     */
    public static HookConfig load(Path gitDir, Path configOption, Path systemFile) {
        Path file = locate(gitDir, configOption, systemFile);
        Builder b = new Builder();
        if (file != null) {
            b.readFile(file);
        }
        return b.build(file);
    }

    /**
     * The store URL.
     *
     * @throws ConfigException when none is configured
     */
    public String requireStore() {
        return store.orElseThrow(() -> new ConfigException("store: no store URL configured; set 'store' in "
                + file.map(Path::toString).orElse(SYSTEM_FILE_NAME) + ", or pass --store to the installed hook"));
    }

    private static Path locate(Path gitDir, Path configOption, Path systemFile) {
        if (configOption != null) {
            return mustExist(configOption, "--config");
        }
        if (gitDir != null) {
            Path repoFile = gitDir.resolve(REPO_FILE_NAME);
            if (SmallFiles.exists(repoFile)) {
                return repoFile;
            }
        }
        return systemFile != null && SmallFiles.exists(systemFile) ? systemFile : null;
    }

    private static Path mustExist(Path file, String source) {
        if (!SmallFiles.isFile(file)) {
            throw new ConfigException(source + ": configuration file " + file + " does not exist or is not a file");
        }
        return file;
    }

    /** Collects values from the file, then checks them as a whole. */
    private static final class Builder {
        private String store;
        private String server;
        private List<String> fencedRefs = List.of("refs/heads/**");
        private PusherPolicy defaultPolicy = PusherPolicy.BUMP;
        private final List<PusherRule> rules = new ArrayList<>();
        private final List<FencePolicy.HolderRule> holderRules = new ArrayList<>();
        private List<String> agents = List.of();
        private boolean acceptWhenStoreDown = true;
        private Duration storeTimeout = Duration.ofSeconds(2);
        private String repoId;
        private String git = DEFAULT_GIT;
        private List<String> pusherVariables = DEFAULT_PUSHER_VARIABLES;

        void readFile(Path file) {
            String text;
            try {
                byte[] bytes = SmallFiles.readIfExists(file, Integer.MAX_VALUE);
                if (bytes == null) {
                    throw new ConfigException(file + ": configuration file does not exist");
                }
                text = new String(bytes, StandardCharsets.UTF_8);
                // Exactly the valid UTF-8 texts encode back to their bytes (the decoding above replaces what
                // is malformed): a strict decoder's answer, without its decoding loop a hook runs interpreted.
                if (!Arrays.equals(text.getBytes(StandardCharsets.UTF_8), bytes)) {
                    throw new ConfigException(file + ": not valid UTF-8 text");
                }
            } catch (IOException e) {
                throw new ConfigException(file + ": cannot read the configuration file: " + e, e);
            }
            Map<String, Integer> seen = new HashMap<>();
            String[] lines = text.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                String line = lines[i].strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                int eq = line.indexOf('=');
                if (eq < 0) {
                    throw new ConfigException(
                            where(file, i) + ": expected 'key = value', got '" + Printable.escape(line, 80) + "'");
                }
                String key = line.substring(0, eq).strip();
                String value = line.substring(eq + 1).strip();
                if (key.isEmpty()) {
                    throw new ConfigException(where(file, i) + ": missing key before '='");
                }
                Integer first = seen.putIfAbsent(key, i + 1);
                if (first != null) {
                    throw new ConfigException(where(file, i) + ": " + Printable.escape(key, 80)
                            + ": given twice (first on line " + first + "); give each key once");
                }
                try {
                    apply(key, value);
                } catch (InvalidInputException | ConfigException e) {
                    throw new ConfigException(
                            where(file, i) + ": " + Printable.escape(key, 80) + ": "
                                    + Printable.escape(e.getMessage(), 400),
                            e);
                }
            }
        }

        /** "file:line" of the line at {@code index}, for a message (built only for one). */
        private static String where(Path file, int index) {
            return file + ":" + (index + 1);
        }

        /** Sets one key; throws with the problem only (the caller adds where and which key). */
        private void apply(String key, String value) {
            switch (key) {
                case "store" -> store = url(value, false);
                case "server" -> server = url(value, true);
                case "fenced-refs" -> fencedRefs = globs(value, true);
                case "pusher-policy.default" -> defaultPolicy = policy(value);
                case "agent-pushers" -> agents = globs(value, false);
                case "on-store-down" -> acceptWhenStoreDown = onStoreDown(value);
                case "store-timeout" -> storeTimeout = timeout(value);
                case "repo-id" -> repoId = Names.require("repo id", value);
                case "git" -> git = gitBinary(value);
                case "pusher-variables" -> pusherVariables = variableNames(value);
                default -> {
                    if (key.startsWith(PUSHER_POLICY_PREFIX) && key.length() > PUSHER_POLICY_PREFIX.length()) {
                        String glob = key.substring(PUSHER_POLICY_PREFIX.length());
                        checkGlob(glob);
                        rules.add(new PusherRule(glob, policy(value)));
                    } else if (key.startsWith(HOLDER_PUSHERS_PREFIX) && key.length() > HOLDER_PUSHERS_PREFIX.length()) {
                        String holderGlob = key.substring(HOLDER_PUSHERS_PREFIX.length());
                        checkGlob(holderGlob);
                        checkGlob(value);
                        holderRules.add(new FencePolicy.HolderRule(holderGlob, value));
                    } else {
                        throw new ConfigException("unknown key (known keys: " + String.join(", ", KEYS)
                                + ", pusher-policy.<glob> and holder-pushers.<holder-glob>)");
                    }
                }
            }
        }

        HookConfig build(Path file) {
            FencePolicy policy = new FencePolicy(
                    fencedRefs, rules, defaultPolicy, agents, acceptWhenStoreDown, storeTimeout, holderRules);
            return new HookConfig(
                    policy,
                    Optional.ofNullable(store),
                    Optional.ofNullable(server),
                    Optional.ofNullable(repoId),
                    Optional.ofNullable(file),
                    git,
                    pusherVariables);
        }

        private static List<String> variableNames(String value) {
            List<String> out = new ArrayList<>();
            for (String part : value.split(",", -1)) {
                String name = part.strip();
                if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                    throw new ConfigException("'" + Printable.escape(name, 80) + "' is not an environment variable"
                            + " name; give names such as GL_USER, REMOTE_USER, separated by commas");
                }
                if (out.contains(name)) {
                    throw new ConfigException(name + " is named twice");
                }
                out.add(name);
            }
            return List.copyOf(out);
        }

        private static String gitBinary(String value) {
            if (value.equals(DEFAULT_GIT)) {
                return value;
            }
            for (int i = 0; i < value.length(); i++) {
                if (Character.isISOControl(value.charAt(i))) {
                    throw new ConfigException("contains a control character at position " + i);
                }
            }
            if (!value.startsWith("/")) {
                throw new ConfigException("'" + Printable.escape(value, 80)
                        + "' is neither an absolute path nor 'git' (the git binary on the hook's PATH)");
            }
            return value;
        }

        private static String url(String value, boolean httpOnly) {
            // Store and server URLs may carry credentials: the messages describe the problem, never the value.
            if (value.isEmpty()) {
                throw new ConfigException("must not be empty");
            }
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (Character.isISOControl(c) || Character.isWhitespace(c)) {
                    throw new ConfigException("URL contains a space or control character at position " + i
                            + " (the value is not shown: it may hold credentials)");
                }
            }
            URI uri;
            try {
                uri = new URI(value);
            } catch (URISyntaxException e) {
                throw new ConfigException("not a valid URL: " + e.getReason() + " at position " + e.getIndex()
                        + " (the value is not shown: it may hold credentials)");
            }
            String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
            if (scheme == null) {
                throw new ConfigException("not a URL: it has no scheme (expected e.g. redis://host:6379 or"
                        + " sqlite:/path/fence.db; the value is not shown: it may hold credentials)");
            }
            if (httpOnly && !(scheme.equals("http") || scheme.equals("https"))) {
                throw new ConfigException("must be an http:// or https:// URL, not " + scheme + ":");
            }
            if (httpOnly && (uri.getHost() == null || uri.getHost().isEmpty())) {
                throw new ConfigException("an http(s) URL needs a host");
            }
            return value;
        }

        private static List<String> globs(String value, boolean refs) {
            if (value.isBlank()) {
                if (refs) {
                    throw new ConfigException("needs at least one pattern, such as refs/heads/**");
                }
                return List.of();
            }
            List<String> out = new ArrayList<>();
            for (String part : value.split(",", -1)) {
                String glob = part.strip();
                if (glob.isEmpty()) {
                    throw new ConfigException("empty pattern in '" + Printable.escape(value, 80)
                            + "'; separate patterns with single commas");
                }
                checkGlob(glob);
                if (refs && !glob.startsWith("refs/")) {
                    throw new ConfigException("pattern '" + Printable.escape(glob, 80)
                            + "' does not start with refs/; patterns match full ref names such as refs/heads/main");
                }
                out.add(glob);
            }
            return List.copyOf(out);
        }

        private static void checkGlob(String glob) {
            for (int i = 0; i < glob.length(); i++) {
                char c = glob.charAt(i);
                if (Character.isISOControl(c) || Character.isWhitespace(c)) {
                    throw new ConfigException("pattern '" + Printable.escape(glob, 80)
                            + "' contains whitespace or a control character at position " + i);
                }
            }
        }

        private static PusherPolicy policy(String value) {
            for (PusherPolicy p : PusherPolicy.values()) {
                if (p.label().equals(value)) {
                    return p;
                }
            }
            throw new ConfigException("unknown pusher policy '" + Printable.escape(value, 40)
                    + "' (expected bump, bump-force, reject or allow)");
        }

        private static boolean onStoreDown(String value) {
            return switch (value) {
                case "accept" -> true;
                case "reject" -> false;
                default -> throw new ConfigException("'" + Printable.escape(value, 40) + "' is not accept or reject");
            };
        }

        private static Duration timeout(String value) {
            Duration d = Durations.parsePositive("duration", value);
            if (d.compareTo(MAX_STORE_TIMEOUT) > 0) {
                throw new ConfigException(Durations.format(d) + " is longer than the 4s maximum: GHES gives all"
                        + " of a push's hooks 5 s together, and the hook must answer before that");
            }
            return d;
        }
    }
}
