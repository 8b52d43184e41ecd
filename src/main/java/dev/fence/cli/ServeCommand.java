package dev.fence.cli;

import dev.fence.audit.TimelinePage;
import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.doctor.Doctor;
import dev.fence.doctor.Finding;
import dev.fence.doctor.Report;
import dev.fence.doctor.StoreChecks;
import dev.fence.hook.HookConfig;
import dev.fence.server.CredentialsFile;
import dev.fence.server.HookServer;
import dev.fence.server.Role;
import dev.fence.server.ServerSettings;
import dev.fence.server.Warmup;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence serve}: the hook server. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = {
            "Run the fence HTTP API (docs/api.md): leases, hook verdicts for curl shims, ledger queries,",
            "/healthz, /readyz and /metrics. Callers authenticate with 'Authorization: Bearer <name>:<secret>'",
            "from the credentials file (see 'fence serve credentials add'). Stops gracefully on SIGTERM.",
            "The policy (fenced refs, pusher policies, agent patterns, on-store-down, store-timeout) comes",
            "from --config (the hook configuration format); hook requests cannot change it.",
            "",
            "At start it names each unsafe part of the store's set-up on stderr, one line each with its fix",
            "('warning: <check>: …; fix: …', the warnings of 'fence doctor': a Redis that can lose grants, a SQLite",
            "file other users may read, a PostgreSQL synchronous_commit of off or local) and refuses, with exit",
            "status 6, a Redis whose maxmemory-policy may evict keys."
        },
        subcommands = {ServeCommand.CredentialsCommand.class})
final class ServeCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(
            names = "--listen",
            paramLabel = "HOST:PORT",
            defaultValue = "127.0.0.1:8700",
            description = "Address to listen on (default: ${DEFAULT-VALUE}; port 0 picks a free one).")
    String listen;

    @Option(
            names = "--store",
            paramLabel = "URL",
            description = "Store URL (default: $FENCE_STORE, else the SQLite default).")
    String store;

    @Option(
            names = "--credentials",
            paramLabel = "FILE",
            description = "Credentials file (re-read when it changes: a revoke takes effect at once).")
    Path credentials;

    @Option(names = "--config", paramLabel = "FILE", description = "Hook configuration (fence.conf format).")
    Path config;

    @Option(
            names = "--threads",
            paramLabel = "N",
            defaultValue = "32",
            description = "Request threads: each holds a hook verdict for its store round trips (default:"
                    + " ${DEFAULT-VALUE}).")
    int threads;

    @Option(
            names = "--max-body",
            paramLabel = "BYTES",
            defaultValue = "4194304",
            description = "Largest request body in bytes (default: ${DEFAULT-VALUE}); larger ones get 413.")
    int maxBody;

    @Option(
            names = "--grace",
            paramLabel = "DURATION",
            defaultValue = "10s",
            description = "How long a stop waits for requests in flight (default: ${DEFAULT-VALUE}).")
    String grace;

    @Option(
            names = "--commit-url",
            paramLabel = "TEMPLATE",
            description = "Link commits on the /audit page: an http(s) URL with {sha} (and optionally {repo}),"
                    + " e.g. 'https://git.example.com/{repo}/-/commit/{sha}'.")
    String commitUrl;

    @Option(
            names = "--warm-up",
            paramLabel = "N",
            defaultValue = "" + DEFAULT_WARM_UP,
            description = "Verdicts to send at start, in the background, through a scratch server of its own (a"
                    + " loopback port, a SQLite store and a credential in a temporary directory, removed after), so"
                    + " that the JIT has compiled the verdict path before hooks wait for it; the real store, ledger"
                    + " and credentials are not touched. It stops early once the server has answered 1000 real"
                    + " verdicts (default: ${DEFAULT-VALUE}; 0: none; at most 100000).")
    int warmUp;

    /** About what compiles the verdict path on two cores (a few seconds of CPU). */
    static final int DEFAULT_WARM_UP = 10_000;

    /** The most: its scratch ledger (a few hundred bytes a verdict) stays a few tens of MB. */
    private static final int MOST_WARM_UP = 100_000;

    /** The warm-up's concurrent clients: a shim's one-at-a-time verdicts and a group commit's shared ones. */
    private static final int WARM_UP_CLIENTS = 2;

    ServeCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws InterruptedException {
        if (credentials == null) {
            throw new InvalidInputException(
                    "--credentials FILE is required (create one with 'fence serve credentials add')");
        }
        if (threads < 1 || threads > 512) {
            throw new InvalidInputException("--threads must be from 1 to 512");
        }
        if (maxBody < 1024) {
            throw new InvalidInputException("--max-body must be at least 1024 bytes");
        }
        if (warmUp < 0 || warmUp > MOST_WARM_UP) {
            throw new InvalidInputException("--warm-up must be from 0 to " + MOST_WARM_UP + " verdicts");
        }
        // The policy comes from the file alone, as for the hook; requests never set it.
        HookConfig hookConfig = HookConfig.load(null, config, null);
        String url =
                Stores.resolveUrl(store != null ? store : hookConfig.store().orElse(null), ctx.env());
        ServerSettings settings = new ServerSettings(
                        address(listen),
                        url,
                        credentials,
                        hookConfig,
                        threads,
                        ServerSettings.DEFAULT_QUEUE,
                        maxBody,
                        Durations.parsePositive("--grace", grace),
                        ServerSettings.DEFAULT_REQUEST_TIMEOUT)
                .withCommitUrl(commitUrl == null ? null : TimelinePage.commitUrl(commitUrl));
        StoreOptions options = new StoreOptions(
                settings.storeTimeout(),
                StoreOptions.defaults().retention(),
                0,
                StoreOptions.defaults().waitTimeout());
        refuseUnsafeStore(url, options);
        Consumer<String> log = line -> {
            synchronized (ctx.err()) {
                ctx.err().println("fence serve: " + line);
                ctx.err().flush();
            }
        };
        HookServer server = HookServer.start(settings, u -> Stores.open(u, options), ctx.clock(), log);
        AtomicBoolean stopping = new AtomicBoolean();
        AtomicReference<Thread> warming = new AtomicReference<>();
        // Registered before the warm-up starts, so that a stop at any moment waits for it to clean up.
        Thread hook = new Thread(
                () -> {
                    stopping.set(true);
                    server.close();
                    awaitWarmUp(warming.get());
                },
                "fence-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        if (warmUp > 0) {
            // Real verdicts warm the server too; once it has answered this many it is busy, and the warm-up
            // would only take their cores.
            warming.set(startWarmUp(() -> stopping.get() || server.verdictsAnswered() >= BUSY_VERDICTS, log));
        }
        ctx.out().println("listening on " + server.uri());
        ctx.out().flush();
        server.awaitStop();
        stopping.set(true);
        awaitWarmUp(warming.get());
        return ExitCode.OK.code();
    }

    /**
     * Starts the warm-up ({@link Warmup}) on a thread of its own, while the real server already answers: a
     * restart must not leave hooks without a server for the seconds it takes. Its scratch directory is removed
     * when it ends (and those of warm-ups killed an hour or more ago, which nothing removed); a warm-up that
     * fails is logged and changes nothing else.
     */
    private Thread startWarmUp(BooleanSupplier stop, Consumer<String> log) {
        Thread t = new Thread(
                () -> {
                    Path dir = null;
                    String done = null;
                    try {
                        dir = Files.createTempDirectory(SCRATCH_PREFIX);
                        removeStaleScratch(dir, ctx.clock(), log);
                        StoreOptions scratch = StoreOptions.defaults();
                        Warmup.Outcome o = Warmup.run(
                                "sqlite:" + dir.resolve("warm-up.db"),
                                dir.resolve("credentials"),
                                u -> Stores.open(u, scratch),
                                ctx.clock(),
                                warmUp,
                                WARM_UP_CLIENTS,
                                stop);
                        done = String.format(
                                Locale.ROOT,
                                o.stopped()
                                        ? "the warm-up stopped after %d verdicts in %.1f s (the server is stopping,"
                                                + " or busy enough to warm itself)"
                                        : "warmed the verdict path with %d verdicts through a scratch server in %.1f s",
                                o.verdicts(),
                                o.took().toMillis() / 1000.0);
                    } catch (IOException | RuntimeException e) {
                        done = "the warm-up did not finish (" + e.getMessage() + "); the first verdicts are answered"
                                + " more slowly, nothing else changes";
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        if (dir != null && !deleteTree(dir)) {
                            log.accept("could not remove the warm-up's scratch directory " + dir);
                        }
                    }
                    // Said once its scratch directory is gone: the line means the warm-up is over.
                    if (done != null) {
                        log.accept(done);
                    }
                },
                "fence-serve-warm-up");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * Removes the scratch directories beside {@code own} of warm-ups that were killed before they could
     * (SIGKILL, out of memory), are an hour old (a warm-up takes seconds, so no running server's directory
     * is that old) and belong to the same account as {@code own} (never another user's).
     */
    private static void removeStaleScratch(Path own, Clock clock, Consumer<String> log) throws IOException {
        UserPrincipal account = Files.getOwner(own, LinkOption.NOFOLLOW_LINKS);
        Instant hourAgo = clock.instant().minus(Duration.ofHours(1));
        try (Stream<Path> dirs = Files.list(own.getParent())) {
            for (Path d : dirs.filter(p -> p.getFileName().toString().startsWith(SCRATCH_PREFIX))
                    .toList()) {
                try {
                    if (Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)
                            && account.equals(Files.getOwner(d, LinkOption.NOFOLLOW_LINKS))
                            && Files.getLastModifiedTime(d, LinkOption.NOFOLLOW_LINKS)
                                    .toInstant()
                                    .isBefore(hourAgo)
                            && !deleteTree(d)) {
                        log.accept("could not remove an old warm-up's scratch directory " + d);
                    }
                } catch (IOException e) {
                    // Gone already, or not readable: not this server's to remove.
                }
            }
        }
    }

    /** The name every warm-up's scratch directory starts with. */
    private static final String SCRATCH_PREFIX = "fence-serve-warm-up";

    /** Real verdicts after which the warm-up stops: a server this busy compiles its path without one. */
    private static final long BUSY_VERDICTS = 1_000;

    /** Waits a little for the warm-up to see that the server stops and remove its scratch directory. */
    private static void awaitWarmUp(Thread warming) {
        if (warming == null) {
            return;
        }
        try {
            warming.join(WARM_UP_STOP_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** How long a stop waits for the warm-up: its requests end within their own timeouts, far sooner. */
    private static final long WARM_UP_STOP_MILLIS = 10_000;

    /** Deletes {@code dir} and everything in it; false if anything is left. */
    private static boolean deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // Said below, if the directory is still there.
        }
        return !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Names each unsafe part of the store's set-up on stderr, every start ({@code fence doctor} says more),
     * and refuses a Redis whose eviction policy may evict fence's keys: an evicted counter repeats tokens.
     */
    private void refuseUnsafeStore(String url, StoreOptions options) {
        Report setup = Doctor.examine(List.of(StoreChecks.setup(url, options, DoctorCommand.user(ctx.env()))));
        Optional<Finding> refusal = StoreChecks.refusal(setup);
        for (Finding f : setup.problems()) {
            if (refusal.isEmpty() || f != refusal.get()) {
                ctx.err().println("warning: " + f.check() + ": " + f.detail() + "; fix: " + f.fix());
            }
        }
        ctx.err().flush();
        if (refusal.isPresent()) {
            throw new ConfigException("fence serve will not use this store: "
                    + refusal.get().detail() + "; fix: " + refusal.get().fix());
        }
    }

    /** Parses {@code HOST:PORT} (IPv6 as {@code [::1]:PORT}). */
    static InetSocketAddress address(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new InvalidInputException("--listen must be HOST:PORT, e.g. 127.0.0.1:8700; got '" + text + "'");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new InvalidInputException(
                    "--listen: the port must be 0-65535; got '" + text.substring(colon + 1) + "'");
        }
        return new InetSocketAddress(host, port);
    }

    /** {@code fence serve credentials}: manage the credentials file. */
    @ExitCodes({ExitCode.OK, ExitCode.USAGE})
    @Command(
            name = "credentials",
            mixinStandardHelpOptions = true,
            description = {
                "Manage fence serve's credentials file. Roles: hook (submit pushes for verdicts), agent (lease",
                "operations as its holder names), auditor (read the ledger and lease status), admin (everything).",
                "Only a hash of each secret is stored; a running server re-reads the file when it changes."
            },
            subcommands = {CredentialsAdd.class, CredentialsRevoke.class, CredentialsList.class})
    static final class CredentialsCommand implements Runnable {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "a subcommand is required (add, revoke, list)");
        }
    }

    /** {@code fence serve credentials add}. */
    @ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
    @Command(
            name = "add",
            mixinStandardHelpOptions = true,
            description = {
                "Add a credential with a new random secret and print '<name>:<secret>' once: it is the bearer",
                "token (FENCE_CREDENTIAL) and is stored nowhere; only its SHA-256 goes into the file."
            })
    static final class CredentialsAdd implements Callable<Integer> {
        private final Context ctx;

        @Option(names = "--name", required = true, paramLabel = "NAME", description = "Credential name.")
        String name;

        @Option(names = "--role", required = true, paramLabel = "ROLE", description = "hook, agent, auditor or admin.")
        String role;

        @Option(
                names = "--holder",
                paramLabel = "GLOB",
                description = "agent only: a holder name (glob) it may act as; repeatable (default: its own name).")
        List<String> holders;

        @Option(names = "--file", required = true, paramLabel = "FILE", description = "The credentials file.")
        Path file;

        CredentialsAdd(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            String token = CredentialsFile.add(
                    file, name, Role.parse(role), holders == null ? List.of() : holders, new SecureRandom());
            ctx.out().println(token);
            ctx.err()
                    .println("added credential '" + name + "' (" + role + ") to " + file
                            + "; the line above is its secret, shown only now");
            return ExitCode.OK.code();
        }
    }

    /** {@code fence serve credentials revoke}. */
    @ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
    @Command(
            name = "revoke",
            mixinStandardHelpOptions = true,
            description = "Remove a credential; servers stop accepting it at once.")
    static final class CredentialsRevoke implements Callable<Integer> {
        private final Context ctx;

        @Option(names = "--name", required = true, paramLabel = "NAME", description = "Credential name.")
        String name;

        @Option(names = "--file", required = true, paramLabel = "FILE", description = "The credentials file.")
        Path file;

        CredentialsRevoke(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            if (!CredentialsFile.revoke(file, name)) {
                throw new ConfigException("no credential named '" + name + "' in " + file);
            }
            ctx.out().println("revoked credential '" + name + "'");
            return ExitCode.OK.code();
        }
    }

    /** {@code fence serve credentials list}. */
    @ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            description = "List names, roles and holders (never secrets).")
    static final class CredentialsList implements Callable<Integer> {
        private final Context ctx;

        @Option(names = "--file", required = true, paramLabel = "FILE", description = "The credentials file.")
        Path file;

        CredentialsList(Context ctx) {
            this.ctx = ctx;
        }

        @Override
        public Integer call() {
            CredentialsFile.describe(file).forEach(ctx.out()::println);
            return ExitCode.OK.code();
        }
    }
}
