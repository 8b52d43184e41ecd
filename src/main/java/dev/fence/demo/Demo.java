package dev.fence.demo;

import dev.fence.core.ConfigException;
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
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * {@code fence demo}: sets up where the {@link IncidentDemo} replays (a workspace; a store, an in-process
 * {@code fence serve} or a running one with credentials for each role), runs it, and removes what it made.
 *
 * <p>Canonical usage, from the command that parsed the options:
 *
 * <pre>{@code
 * boolean ok = new Demo(out, err, env, clock, runner).run(new Demo.Request(null, "auto", null, null, ttl, false, timeout, null),
 *         Progress.none());
 * }</pre>
 */
public final class Demo {
    /** The argument of {@code --server} that starts an in-process server. */
    public static final String AUTO = "auto";

    /** The policy of the in-process server: the same as the store mode's fence.conf. */
    public static final String POLICY = "agent-pushers = agent-*\n";

    /** The roles of the story: the two agents, the hook, the auditor. */
    private static final List<String> ROLES = List.of(IncidentDemo.AGENT_A, IncidentDemo.AGENT_B, "hook", "auditor");

    /**
     * What to replay against.
     *
     * @param store a store URL, or null for a SQLite file in the workspace (with {@link #AUTO}: the in-process
     *     server's store)
     * @param server null for direct mode, {@link #AUTO} for an in-process server, else a running server's URL
     * @param credentials with a server URL: its credentials file, where the demo adds short-lived credentials
     *     (revoked when it ends); null to use the admin credential from the environment for every role
     * @param db the database of the migration part ({@code fence migrate --db}, e.g. a PostgreSQL URL), or
     *     null for a SQLite file in the workspace; direct mode only (in server mode the migration steps are
     *     skipped)
     * @param ttl the compressed lease length
     * @param keep keep the workspace afterwards
     * @param clientTimeout how long a request to a running server may take
     * @param html where to write the incident page ({@code fence audit timeline --html}) at the end, or null
     */
    public record Request(
            String store,
            String server,
            Path credentials,
            String db,
            Duration ttl,
            boolean keep,
            Duration clientTimeout,
            Path html) {}

    private final PrintWriter out;
    private final PrintWriter err;
    private final Map<String, String> env;
    private final Clock clock;
    private final FenceRunner cli;

    /** What the in-process server logged (never secrets): shown when the replay fails. */
    private final List<String> serverLog = new CopyOnWriteArrayList<>();

    /**
     * @param out the story
     * @param err warnings (a credential that could not be revoked)
     * @param env the environment the demo's commands start from
     * @param clock the clock of the in-process server
     * @param cli runs fence's commands in-process
     */
    public Demo(PrintWriter out, PrintWriter err, Map<String, String> env, Clock clock, FenceRunner cli) {
        this.out = out;
        this.err = err;
        this.env = Map.copyOf(env);
        this.clock = clock;
        this.cli = cli;
    }

    /**
     * Replays the incident as {@code request} says.
     *
     * @return true when every expected outcome happened
     * @throws InvalidInputException for options that do not go together
     * @throws ConfigException when a running server refuses the demo's credentials
     * @throws StoreUnavailableException when a running server is not ready
     */
    public boolean run(Request request, Progress progress) throws IOException {
        boolean auto = AUTO.equals(request.server());
        if (request.server() != null && !auto && request.store() != null) {
            throw new InvalidInputException("give either --server URL or --store, not both (--store goes with"
                    + " --server auto, as the in-process server's store)");
        }
        if (request.credentials() != null && (request.server() == null || auto)) {
            throw new InvalidInputException("--credentials goes with --server URL (--server auto makes its own)");
        }
        if (request.db() != null && request.server() != null) {
            throw new InvalidInputException("--db goes with direct mode: fence migrate takes --store, not --server,"
                    + " so the demo skips its migration steps in server mode");
        }
        Path dir = Files.createTempDirectory("fence-demo-");
        List<Runnable> cleanup = new ArrayList<>();
        boolean ok;
        try {
            IncidentDemo.Mode mode;
            String db = null;
            if (request.server() == null) {
                db = request.db() != null ? request.db() : "sqlite:" + dir.resolve("billing-dev.db");
                mode = new IncidentDemo.Mode.Store(
                        request.store() != null ? request.store() : "sqlite:" + dir.resolve("fence.db"));
            } else if (auto) {
                mode = inProcessServer(request, dir, cleanup);
            } else {
                mode = runningServer(request, dir, cleanup);
            }
            ok = new IncidentDemo(out, env, cli, dir, mode, db, request.ttl(), progress, request.html()).run();
            if (!ok && !serverLog.isEmpty()) {
                out.println("The in-process server's log:");
                serverLog.forEach(l -> out.println("  " + l));
            }
        } finally {
            for (int i = cleanup.size() - 1; i >= 0; i--) {
                cleanup.get(i).run();
            }
            if (!request.keep()) {
                delete(dir);
            }
        }
        return ok;
    }

    /** Starts {@code fence serve} in this process on a free loopback port, with credentials for every role. */
    private IncidentDemo.Mode inProcessServer(Request request, Path dir, List<Runnable> cleanup) {
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
        String storeUrl = request.store() != null ? request.store() : "sqlite:" + dir.resolve("fence.db");
        ServerSettings settings = ServerSettings.of(
                new InetSocketAddress("127.0.0.1", 0), storeUrl, file, HookConfig.load(null, config, null));
        StoreOptions options = new StoreOptions(
                settings.storeTimeout(),
                StoreOptions.defaults().retention(),
                0,
                StoreOptions.defaults().waitTimeout());
        HookServer s = HookServer.start(settings, u -> Stores.open(u, options), clock, serverLog::add);
        cleanup.add(s::close);
        String where = request.store() != null ? "on the --store store" : "on SQLite in the workspace";
        return serverMode(
                dir,
                s.uri().toString(),
                "in-process fence serve " + where + ", stopped when the demo ends",
                secrets,
                true);
    }

    /** A running server: short-lived credentials in its file, or the admin credential from the environment. */
    private IncidentDemo.Mode runningServer(Request request, Path dir, List<Runnable> cleanup) {
        FenceClient probe = FenceClient.create(
                request.server(), Map.of(FenceClient.CREDENTIAL_ENV, placeholder()), request.clientTimeout());
        FenceClient.Response ready = probe.get("/readyz", Map.of());
        if (ready.status() != 200) {
            throw new StoreUnavailableException(
                    "the fence server at " + probe.base() + " is not ready: " + ready.message());
        }
        if (request.credentials() != null) {
            String run = "fence-demo-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
            cleanup.add(() -> {
                for (String role : ROLES) {
                    try {
                        CredentialsFile.revoke(request.credentials(), run + "-" + role);
                    } catch (RuntimeException e) {
                        err.println("fence demo: could not revoke " + run + "-" + role + ": " + e.getMessage());
                    }
                }
            });
            Map<String, String> secrets = addCredentials(request.credentials(), run + "-");
            FenceClient agent = FenceClient.create(
                    request.server(),
                    Map.of(FenceClient.CREDENTIAL_ENV, secrets.get(IncidentDemo.AGENT_A)),
                    request.clientTimeout());
            FenceClient.Response r =
                    agent.get("/v1/leases/grants", Map.of("holder", IncidentDemo.AGENT_A, "limit", "1"));
            if (r.status() != 200) {
                throw new ConfigException("the fence server at " + agent.base() + " refused the credential the demo"
                        + " added to " + request.credentials() + " (" + r.message()
                        + "): is that the file it was started"
                        + " with (fence serve --credentials)?");
            }
            return serverMode(
                    dir,
                    agent.base().toString(),
                    "running fence serve, demo credentials in " + request.credentials(),
                    secrets,
                    false);
        }
        String credential;
        try {
            credential = FenceClient.credential(env);
        } catch (ConfigException e) {
            throw new ConfigException(e.getMessage() + ". fence demo --server URL needs an admin credential there,"
                    + " or --credentials FILE (the server's credentials file); 'fence demo --server auto' needs"
                    + " neither.");
        }
        FenceClient admin = FenceClient.create(
                request.server(), Map.of(FenceClient.CREDENTIAL_ENV, credential), request.clientTimeout());
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
        return serverMode(dir, admin.base().toString(), "running fence serve, one admin credential", secrets, false);
    }

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

    /**
     * Writes each role's credential to its own file (mode 600) for FENCE_CREDENTIAL_FILE.
     *
     * @param agentPolicy the server runs {@link #POLICY} (the in-process one); a running server's is its own
     */
    private static IncidentDemo.Mode serverMode(
            Path dir, String url, String description, Map<String, String> secrets, boolean agentPolicy) {
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
        return new IncidentDemo.Mode.Server(url, description, files, secrets.get("hook"), agentPolicy);
    }

    /** A well-formed credential for unauthenticated requests ({@code /readyz}). */
    private static String placeholder() {
        return "fence-demo:" + "x".repeat(43);
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
