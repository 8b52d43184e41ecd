package dev.fence.cli;

import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.core.StoreUnavailableException;
import dev.fence.hook.HookConfig;
import dev.fence.server.CredentialsFile;
import dev.fence.server.HookServer;
import dev.fence.server.Role;
import dev.fence.server.ServerSettings;
import dev.fence.server.client.FenceClient;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence demo}: the incident replay. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Replay the incident fence exists for, in compressed time, against a real bare repository with"
                    + " fence's real hook: agent A's lease lapses while it is paused, agent B takes over and"
                    + " pushes, A's stale push and each workaround it tries (the token number from the message,"
                    + " a force push, no token, a fresh lease) are FENCED, and A re-reads, finds its goal met and"
                    + " stops. Ends with the ledger timeline.",
            "",
            "Runs on a SQLite file in a temporary directory unless --store is given. Exits 0 only when every"
                    + " expected outcome happened, so it doubles as a smoke test.",
            "",
            "--server replays the same story through fence serve: every lease command, fence push, fence"
                    + " status and the timeline go to the server, and the bare repository's hooks are the curl"
                    + " shim asking it with a hook credential. Each agent has its own agent credential, bound to"
                    + " its holder name.",
            "--server auto starts an in-process fence serve on 127.0.0.1 (a free port) with its own credentials"
                    + " and policy, on a SQLite file in the demo's directory (or on --store URL), and stops it"
                    + " afterwards: nothing to set up.",
            "--server URL --credentials FILE uses a running fence serve whose credentials file is FILE (run"
                    + " the demo where the server runs): the demo adds short-lived credentials for its agents,"
                    + " hook and auditor to FILE and revokes them when it ends.",
            "--server URL alone uses a running fence serve with the admin credential from $FENCE_CREDENTIAL or"
                    + " $FENCE_CREDENTIAL_FILE for every role.",
            "A running server's policy (fence serve --config) must treat agent-* pushers as agents"
                    + " ('agent-pushers = agent-*'), as the demo's own does, for the tokenless workaround to be"
                    + " refused.",
            "",
            "Examples:",
            "  fence demo",
            "  fence demo --server auto",
            "  fence demo --server http://127.0.0.1:8700 --credentials /etc/fence/credentials"
        })
final class DemoCommand implements Callable<Integer> {
    /** The argument of {@code --server} that starts an in-process server. */
    static final String AUTO = "auto";

    /** The policy of the in-process server: the same as the store mode's fence.conf. */
    static final String POLICY = "agent-pushers = agent-*\n";

    private final Context ctx;

    /** What the in-process server logged (never secrets): shown when the replay fails. */
    private final List<String> serverLog = new CopyOnWriteArrayList<>();

    @Option(
            names = "--store",
            paramLabel = "URL",
            description = "Store to replay against (default: a new SQLite file in the demo's directory); with"
                    + " --server auto, the in-process server's store.")
    String store;

    @Option(
            names = "--server",
            paramLabel = "URL|auto",
            description = "Replay through fence serve at URL, or through an in-process one ('auto').")
    String server;

    @Option(
            names = "--credentials",
            paramLabel = "FILE",
            description = "With --server URL: the server's credentials file, where the demo adds its own"
                    + " short-lived credentials (revoked when it ends). Without it the credential comes from"
                    + " $FENCE_CREDENTIAL or $FENCE_CREDENTIAL_FILE and must be an admin one.")
    Path credentials;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "3s",
            description = "The compressed lease length (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(names = "--keep", description = "Keep the demo's directory (repositories, clones, store) afterwards.")
    boolean keep;

    @Option(
            names = "--progress",
            paramLabel = "WHEN",
            defaultValue = "auto",
            description = "Progress line on stderr: auto (on a terminal), always, never (default: ${DEFAULT-VALUE}).")
    String progress;

    DemoCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws IOException {
        var duration = Durations.parsePositive("--ttl", ttl);
        IncidentDemo.Progress shown = progress();
        boolean auto = AUTO.equals(server);
        if (server != null && !auto && store != null) {
            throw new InvalidInputException("give either --server URL or --store, not both (--store goes with"
                    + " --server auto, as the in-process server's store)");
        }
        if (credentials != null && (server == null || auto)) {
            throw new InvalidInputException("--credentials goes with --server URL (--server auto makes its own)");
        }
        Path dir = Files.createTempDirectory("fence-demo-");
        List<Runnable> cleanup = new ArrayList<>();
        boolean ok;
        try {
            IncidentDemo.Mode mode;
            if (server == null) {
                mode = new IncidentDemo.Mode.Store(store != null ? store : "sqlite:" + dir.resolve("fence.db"));
            } else if (auto) {
                mode = inProcessServer(dir, cleanup);
            } else {
                mode = runningServer(dir, cleanup);
            }
            ok = new IncidentDemo(ctx, dir, mode, duration, shown).run();
            if (!ok && !serverLog.isEmpty()) {
                ctx.out().println("The in-process server's log:");
                serverLog.forEach(l -> ctx.out().println("  " + l));
            }
        } finally {
            for (int i = cleanup.size() - 1; i >= 0; i--) {
                cleanup.get(i).run();
            }
            if (!keep) {
                delete(dir);
            }
        }
        return ok ? ExitCode.OK.code() : ExitCode.INTERNAL.code();
    }

    /** Starts {@code fence serve} in this process on a free loopback port, with credentials for every role. */
    private IncidentDemo.Mode inProcessServer(Path dir, List<Runnable> cleanup) {
        Path serverDir = dir.resolve("server");
        Path file = serverDir.resolve("credentials");
        Path config = serverDir.resolve("fence.conf");
        try {
            Files.createDirectories(serverDir);
            Files.writeString(config, POLICY, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> secrets = addCredentials(file, "");
        String storeUrl = store != null ? store : "sqlite:" + dir.resolve("fence.db");
        ServerSettings settings = ServerSettings.of(
                new InetSocketAddress("127.0.0.1", 0), storeUrl, file, HookConfig.load(null, config, null));
        StoreOptions options = new StoreOptions(
                settings.storeTimeout(),
                StoreOptions.defaults().retention(),
                0,
                StoreOptions.defaults().waitTimeout());
        HookServer s = HookServer.start(settings, u -> Stores.open(u, options), ctx.clock(), serverLog::add);
        cleanup.add(s::close);
        String where = store != null ? "on the --store store" : "on SQLite in the workspace";
        return serverMode(
                dir, s.uri().toString(), "in-process fence serve " + where + ", stopped when the demo ends", secrets);
    }

    /** A running server: short-lived credentials in its file, or the admin credential from the environment. */
    private IncidentDemo.Mode runningServer(Path dir, List<Runnable> cleanup) {
        FenceClient probe = FenceClient.create(server, Map.of(FenceClient.CREDENTIAL_ENV, placeholder()), timeout());
        FenceClient.Response ready = probe.get("/readyz", Map.of());
        if (ready.status() != 200) {
            throw new StoreUnavailableException(
                    "the fence server at " + probe.base() + " is not ready: " + ready.message());
        }
        if (credentials != null) {
            String run = "fence-demo-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
            cleanup.add(() -> {
                for (String role : ROLES) {
                    try {
                        CredentialsFile.revoke(credentials, run + "-" + role);
                    } catch (RuntimeException e) {
                        ctx.err().println("fence demo: could not revoke " + run + "-" + role + ": " + e.getMessage());
                    }
                }
            });
            Map<String, String> secrets = addCredentials(credentials, run + "-");
            FenceClient agent = FenceClient.create(
                    server, Map.of(FenceClient.CREDENTIAL_ENV, secrets.get(IncidentDemo.AGENT_A)), timeout());
            FenceClient.Response r =
                    agent.get("/v1/leases/grants", Map.of("holder", IncidentDemo.AGENT_A, "limit", "1"));
            if (r.status() != 200) {
                throw new ConfigException("the fence server at " + agent.base() + " refused the credential the demo"
                        + " added to " + credentials + " (" + r.message() + "): is that the file it was started"
                        + " with (fence serve --credentials)?");
            }
            return serverMode(
                    dir, agent.base().toString(), "running fence serve, demo credentials in " + credentials, secrets);
        }
        String credential;
        try {
            credential = FenceClient.credential(ctx.env());
        } catch (ConfigException e) {
            throw new ConfigException(e.getMessage() + ". fence demo --server URL needs an admin credential there,"
                    + " or --credentials FILE (the server's credentials file); 'fence demo --server auto' needs"
                    + " neither.");
        }
        FenceClient admin = FenceClient.create(server, Map.of(FenceClient.CREDENTIAL_ENV, credential), timeout());
        FenceClient.Response audit = admin.get("/v1/audit", Map.of("limit", "1"));
        FenceClient.Response hook = admin.post("/v1/hook/pre-receive", Map.of("stdin", ""));
        if (audit.status() != 200 || hook.status() != 200) {
            FenceClient.Response bad = audit.status() != 200 ? audit : hook;
            throw new ConfigException("fence demo --server URL needs an admin credential in $"
                    + FenceClient.CREDENTIAL_ENV + " or $" + FenceClient.CREDENTIAL_FILE_ENV + " (it acts as both"
                    + " agents, the hook and the auditor); the server said: " + bad.message() + ". Or pass"
                    + " --credentials FILE (the server's credentials file) to let the demo add its own.");
        }
        Map<String, String> secrets = new LinkedHashMap<>();
        for (String role : ROLES) {
            secrets.put(role, credential);
        }
        return serverMode(dir, admin.base().toString(), "running fence serve, one admin credential", secrets);
    }

    /** The roles of the story: the two agents, the hook, the auditor. */
    private static final List<String> ROLES = List.of(IncidentDemo.AGENT_A, IncidentDemo.AGENT_B, "hook", "auditor");

    /** Adds a credential per role to {@code file} (names prefixed); returns each bearer token by role. */
    private static Map<String, String> addCredentials(Path file, String prefix) {
        SecureRandom random = new SecureRandom();
        Map<String, String> out = new LinkedHashMap<>();
        for (String holder : List.of(IncidentDemo.AGENT_A, IncidentDemo.AGENT_B)) {
            out.put(holder, CredentialsFile.add(file, prefix + holder, Role.AGENT, List.of(holder), random));
        }
        out.put("hook", CredentialsFile.add(file, prefix + "hook", Role.HOOK, List.of(), random));
        out.put("auditor", CredentialsFile.add(file, prefix + "auditor", Role.AUDITOR, List.of(), random));
        return out;
    }

    /** Writes each role's credential to its own file (mode 600) for FENCE_CREDENTIAL_FILE. */
    private static IncidentDemo.Mode serverMode(Path dir, String url, String description, Map<String, String> secrets) {
        Path credentialDir = dir.resolve("credentials");
        Map<String, Path> files = new LinkedHashMap<>();
        try {
            Files.createDirectories(credentialDir);
            for (String role : List.of(IncidentDemo.AGENT_A, IncidentDemo.AGENT_B, "auditor")) {
                Path f = credentialDir.resolve(role);
                Files.writeString(f, "", StandardCharsets.UTF_8);
                Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
                Files.writeString(f, secrets.get(role) + "\n", StandardCharsets.UTF_8);
                files.put(role, f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new IncidentDemo.Mode.Server(url, description, files, secrets.get("hook"));
    }

    /** A well-formed credential for unauthenticated requests ({@code /readyz}). */
    private static String placeholder() {
        return "fence-demo:" + "x".repeat(43);
    }

    private static Duration timeout() {
        return ServerOption.CLIENT_TIMEOUT;
    }

    private IncidentDemo.Progress progress() {
        boolean show =
                switch (progress) {
                    case "always" -> true;
                    case "never" -> false;
                    case "auto" -> ProcessStreams.isTerminal(ctx.err())
                            && ctx.env().get("CI") == null
                            && !"dumb".equals(ctx.env().getOrDefault("TERM", "dumb"));
                    default -> throw new InvalidInputException(
                            "--progress must be auto, always or never; got '" + progress + "'");
                };
        return show ? IncidentDemo.Progress.terminal(ctx.err()) : IncidentDemo.Progress.none();
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
