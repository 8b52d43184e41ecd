package dev.fence.hook;

import dev.fence.core.AcceptedMark;
import dev.fence.core.Admission;
import dev.fence.core.AdmissionService;
import dev.fence.core.Ancestry;
import dev.fence.core.ConfigException;
import dev.fence.core.Digests;
import dev.fence.core.EventType;
import dev.fence.core.FencePolicy;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Landings;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.Proofs;
import dev.fence.core.PushAttempt;
import dev.fence.core.PushOptions;
import dev.fence.core.Reason;
import dev.fence.core.RefDecision;
import dev.fence.core.RefUpdate;
import dev.fence.core.Resources;
import dev.fence.core.StoreUnavailableException;
import dev.fence.core.Verdict;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The pre-receive hook: reads the push (stdin, push options, host environment), judges it, and returns
 * the lines to show the pusher and the exit code git acts on (0 accepts every ref, 1 rejects the whole
 * push).
 *
 * <p>Never hangs: the store gets {@code store-timeout} (default 2 s) for the whole judgement; past it,
 * or when the store cannot be reached, pushes with a token fail closed and tokenless pushes follow
 * {@code on-store-down}. A broken configuration fails closed for every ref the default patterns fence.
 */
public final class PreReceiveHook {
    /** What to show and how to exit. */
    public record Result(int exitCode, List<String> lines) {}

    /**
     * A judged push: what the pusher sees, plus what a server reports about it.
     *
     * @param result the lines and exit code, exactly as the hook prints them
     * @param reason one code for the whole push, for metrics: the first refusal's reason, else the first
     *     admitted ref's ({@code accepted}, {@code bumped}, {@code allowed}), else {@code untouched},
     *     {@code empty} or {@code malformed}; {@code store-down} when the store did not answer
     */
    public record Judgement(Result result, String reason) {}

    /** Most fenced refs whose commits a one-shot hook reads ahead while its store thread connects. */
    private static final int READ_AHEAD_REFS = 8;

    private final Function<String, LeaseStore> openStore;
    private final Clock clock;
    private final ExecutorService workers;
    private final Digests digests;
    private final Proofs proofs;

    /**
     * A hook with the JCE's digests.
     *
     * @param openStore opens the store at a URL (the composition root decides the implementations)
     * @param clock the clock
     */
    public PreReceiveHook(Function<String, LeaseStore> openStore, Clock clock) {
        this(openStore, clock, null, Digests.jce());
    }

    /**
     * A hook with the JCE's digests.
     *
     * @param openStore opens the store at a URL; the hook closes what it opens
     * @param clock the clock
     * @param workers runs the store work, so that the hook can stop waiting for it
     */
    public PreReceiveHook(Function<String, LeaseStore> openStore, Clock clock, ExecutorService workers) {
        this(openStore, clock, workers, Digests.jce());
    }

    /**
     * @param openStore opens the store at a URL; the hook closes what it opens
     * @param clock the clock
     * @param workers runs the store work, so that the hook can stop waiting for it; null for a thread of
     *     its own per push (the one-shot hook process)
     * @param digests checks proofs and names the repository's record files
     */
    public PreReceiveHook(
            Function<String, LeaseStore> openStore, Clock clock, ExecutorService workers, Digests digests) {
        this.openStore = openStore;
        this.clock = clock;
        this.workers = workers;
        this.digests = digests;
        this.proofs = new Proofs(digests);
    }

    /**
     * Judges one push in the repository (direct mode: the hook process itself, ancestry from git).
     *
     * @param env the hook's environment (push options, host identity, quarantine variables)
     * @param gitDir the repository
     * @param stdin the ref update lines
     * @param configFile {@code --config}, or null
     * @param storeOverride {@code --store}, or null
     */
    public Result run(Map<String, String> env, Path gitDir, InputStream stdin, Path configFile, String storeOverride) {
        HookConfig config;
        try {
            config = HookConfig.load(gitDir, configFile);
        } catch (ConfigException e) {
            return brokenConfig(env, gitDir, stdin, e);
        }
        return run(env, gitDir, stdin, config, storeOverride);
    }

    /** As {@link #run(Map, Path, InputStream, Path, String)} with the configuration already read. */
    public Result run(
            Map<String, String> env, Path gitDir, InputStream stdin, HookConfig config, String storeOverride) {
        String url = storeOverride != null ? storeOverride : config.store().orElse(null);
        if (url == null) {
            // Never a store named by the environment (FENCE_STORE, or a default under HOME): on a
            // local-path remote that is the pusher's, who could point the hook at a store of its own.
            return brokenConfig(
                    env,
                    gitDir,
                    stdin,
                    new ConfigException("no store configured: set 'store' in "
                            + config.file().map(Path::toString).orElse("<GIT_DIR>/" + HookConfig.REPO_FILE_NAME)
                            + " or pass --store to the installed hook"));
        }
        GitAncestry ancestry = new GitAncestry(env, gitDir, config.git());
        if (workers != null) {
            return judge(config, env, gitDir, stdin, url, ancestry, Measured.NOTHING)
                    .result();
        }
        // The one-shot hook process: its own thread opens the store at once, while this one reads the
        // push (start-up work on two cores instead of one after the other), then judges it.
        Admitter admitter = new Admitter(url, gitDir, ancestry);
        admitter.start();
        try {
            return judge(config, env, gitDir, stdin, url, null, null, (Decider) admitter)
                    .result();
        } finally {
            admitter.release();
        }
    }

    /**
     * The store thread of a one-shot hook process: opens the store as soon as it starts, waits for the
     * push, judges it, closes the store. The hook waits for it at most {@code store-timeout} from the
     * moment the push is handed over; past that the process exits without it (a daemon thread).
     */
    private final class Admitter extends Thread implements Decider, BooleanSupplier {
        private static final int OPEN = 0;
        private static final int WRITING = 1;
        private static final int ABANDONED = 2;

        private final String url;
        private final Path gitDir;
        private final GitAncestry ancestry;
        private final CountDownLatch handedOver = new CountDownLatch(1);
        /** Who got there first: the store thread about to write, or the hook giving up on it (see judge). */
        private final AtomicInteger gate = new AtomicInteger(OPEN);

        private volatile PushAttempt push;
        private volatile FencePolicy policy;
        private volatile long deadline;
        private volatile Verdict verdict;
        private volatile Throwable failure;
        /** True while the store thread waits for the repository's record lock (other pushes hold it). */
        volatile boolean awaitingRecord;

        Admitter(String url, Path gitDir, GitAncestry ancestry) {
            super("fence-admission");
            setDaemon(true);
            this.url = url;
            this.gitDir = gitDir;
            this.ancestry = ancestry;
        }

        /** The gate of the store thread's first write: true while the hook still waits for the verdict. */
        @Override
        public boolean getAsBoolean() {
            return gate.compareAndSet(OPEN, WRITING);
        }

        @Override
        public void run() {
            LeaseStore store = null;
            try {
                store = openStore.apply(url);
                handedOver.await();
                if (push != null) {
                    verdict = admitRecorded(store, push, policy, ancestry, gitDir, deadline, this);
                }
            } catch (AdmissionService.Abandoned e) {
                // The hook answered without this thread, which therefore wrote nothing: no failure to report.
            } catch (Throwable t) {
                failure = t;
            } finally {
                if (store != null) {
                    store.close();
                }
            }
        }

        /**
         * Hands the push over and waits for the verdict, as {@link PreReceiveHook#judge} with workers does;
         * meanwhile reads the pushed commits ahead, so that the store thread finds the answers at hand.
         */
        @Override
        public Verdict decide(PushAttempt push, FencePolicy policy, boolean[] storeDown) {
            this.push = push;
            this.policy = policy;
            long deadline = System.nanoTime() + policy.storeTimeout().toNanos();
            this.deadline = deadline;
            handedOver.countDown();
            try {
                List<RefUpdate> fenced = new ArrayList<>();
                for (RefUpdate u : push.updates()) {
                    if (fenced.size() < READ_AHEAD_REFS && policy.isFenced(u.ref())) {
                        fenced.add(u);
                    }
                }
                ancestry.readAhead(fenced);
                long left = deadline - System.nanoTime();
                if (left > 0) {
                    // join(0) would wait for ever: with no time left, the verdict is only taken if it is there.
                    join(Math.max(1, left / 1_000_000));
                }
                if (!gate.compareAndSet(OPEN, ABANDONED)) {
                    // The store thread began writing before the time ran out: what it writes is the
                    // verdict, so wait for it (the store's own timeout bounds that write) rather than
                    // answer otherwise and leave a ledger that contradicts what git did.
                    join(policy.storeTimeout().toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                storeDown[0] = true;
                return Admission.storeDown(push, policy, "interrupted", ancestry);
            }
            Verdict v = verdict;
            if (v != null) {
                return v;
            }
            Throwable cause = failure;
            if (cause == null) {
                boolean busy = awaitingRecord;
                interrupt();
                storeDown[0] = true;
                // A repository busy with other pushes is no store outage: on-store-down = accept would let
                // a push through unrecorded, superseding nothing, whenever a pusher starts enough pushes.
                return Admission.storeDown(
                        push,
                        busy ? policy.failingClosed() : policy,
                        busy
                                ? HostRecord.BUSY + " for "
                                        + policy.storeTimeout().toMillis() + " ms"
                                : "no answer within " + policy.storeTimeout().toMillis() + " ms",
                        ancestry);
            }
            if (cause instanceof HostRecord.Busy) {
                storeDown[0] = true;
                return Admission.storeDown(push, policy.failingClosed(), cause.getMessage(), ancestry);
            }
            if (cause instanceof StoreUnavailableException || cause instanceof ConfigException) {
                storeDown[0] = true;
                return Admission.storeDown(push, policy, cause.getMessage(), ancestry);
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        }

        /** Lets the thread finish when no push was handed over (nothing fenced, malformed input). */
        void release() {
            handedOver.countDown();
        }
    }

    /**
     * Judges a push in its own repository: under the lock of the repository's record of accepted tokens
     * ({@link HostRecord}), against that record, raising it before the verdict is returned.
     */
    private Verdict admitRecorded(
            LeaseStore store,
            PushAttempt push,
            FencePolicy policy,
            Ancestry ancestry,
            Path gitDir,
            long deadline,
            BooleanSupplier gate) {
        AdmissionService service = new AdmissionService(store, policy, clock, proofs);
        if (gitDir == null) {
            return service.admit(push, ancestry, Map.of(), gate);
        }
        Admitter waiting = gate instanceof Admitter a ? a : null;
        if (waiting != null) {
            waiting.awaitingRecord = true;
        }
        HostRecord locked;
        try {
            locked = HostRecord.lock(gitDir, deadline, digests);
        } finally {
            if (waiting != null) {
                waiting.awaitingRecord = false;
            }
        }
        try (HostRecord record = locked) {
            // Where fence's post-receive sees what landed (see Landings), a decision supersedes and counts
            // only once its update lands; elsewhere (GitLab, GHES) it does at once.
            boolean deferLanding = LandingRecorder.applies(push.actor().host(), gitDir);
            PendingLandings pending = deferLanding ? PendingLandings.of(gitDir) : null;
            if (deferLanding && ancestry instanceof GitAncestry git) {
                LandingRecorder.settle(store, record, pending, git, clock, List.of(), -1);
            }
            List<String> resources = new ArrayList<>();
            for (RefUpdate u : push.updates()) {
                if (policy.isFenced(u.ref())) {
                    resources.add(Resources.forRef(push.repoId(), u.ref()));
                }
            }
            Verdict v = service.admit(push, ancestry, record.read(resources), gate, deferLanding);
            if (v.accepted()) {
                List<AcceptedMark> marks = marksOf(push, v);
                if (deferLanding) {
                    // A bump raises the record when it lands (Landings#land), like the store's counter.
                    for (java.util.Iterator<AcceptedMark> i = marks.iterator(); i.hasNext(); ) {
                        if (i.next().holder() == null) {
                            i.remove();
                        }
                    }
                    List<PendingLandings.Entry> entries = new ArrayList<>(pending.read());
                    // The updates' receiving process is git's, so a later hook can tell "not yet" from "never".
                    entries.addAll(PendingLandings.received(Landings.pendingOf(
                            push, v, Proofs.holderOf(push.options().proof()), clock.instant())));
                    pending.write(entries);
                }
                record.raise(marks);
            }
            return v;
        }
    }

    /** What an accepted verdict adds to the repository's record: each token written, and each bump. */
    static List<AcceptedMark> marksOf(PushAttempt push, Verdict verdict) {
        List<AcceptedMark> marks = new ArrayList<>();
        for (RefDecision d : verdict.decisions()) {
            if (d instanceof RefDecision.Admitted a && a.reason() == Reason.ACCEPTED) {
                marks.add(new AcceptedMark(
                        a.resource(), a.token(), Proofs.holderOf(push.options().proof())));
            } else if (d instanceof RefDecision.Admitted a && a.reason() == Reason.BUMPED) {
                marks.add(new AcceptedMark(a.resource(), a.token(), null));
            }
        }
        return marks;
    }

    /**
     * What a caller knows of a push besides its ref updates and its ancestry: for the hook process, nothing
     * ({@link #NOTHING}: it measures its own repository); for {@code fence serve}, what the hook that sent
     * the push measured in its repository, and how long the request has waited.
     *
     * @param symbolic resolves pushed names ({@link SymrefFacts}); null for the repository's own refs when
     *     {@code gitDir} is given, else none
     * @param cases the spellings of the pushed refs a caller measured ({@link CaseAliases#parse}); null to
     *     measure the repository at {@code gitDir} when it is given, else to take its file system as one that
     *     respects case
     * @param waitedNanos how long the request has already waited (for a thread of {@code fence serve}): the
     *     verdict waits for the store what is left of {@code store-timeout} (at least 1 ms) before it is
     *     abandoned, so that it is answered within {@code store-timeout} of the request being ready. A verdict
     *     the store thread has begun to write is then still waited for, the whole {@code store-timeout}, as
     *     always: what it writes is the verdict.
     */
    public record Measured(SymbolicRefs.Resolver symbolic, CaseAliases cases, long waitedNanos) {
        /** Nothing measured by the caller, and no time waited. */
        public static final Measured NOTHING = new Measured(null, null, 0);
    }

    /**
     * The rules of a pre-receive hook, whichever way the push arrives: the hook process judging its own
     * repository ({@link #run}), or {@code fence serve} judging a push a shim sent it, with ancestry from
     * facts the shim measured. Both print exactly these lines and exit with this code.
     *
     * @param config the configuration (policy, repo id override)
     * @param env the hook's environment: push options and host identity
     * @param gitDir the repository, or null when judging remotely (plain git then needs {@code
     *     config.repoId()})
     * @param stdin the ref update lines
     * @param storeUrl the store URL handed to the store opener
     * @param ancestry answers ancestry questions
     * @param measured what the caller measured ({@link Measured#NOTHING} for a hook in its repository)
     * @throws dev.fence.core.KnownAncestry.Needed when {@code ancestry} lacks facts; nothing was recorded
     */
    public Judgement judge(
            HookConfig config,
            Map<String, String> env,
            Path gitDir,
            InputStream stdin,
            String storeUrl,
            Ancestry ancestry,
            Measured measured) {
        return judge(
                config,
                env,
                gitDir,
                stdin,
                storeUrl,
                measured.symbolic(),
                measured.cases(),
                (push, policy, down) -> judge(push, policy, storeUrl, ancestry, down, measured.waitedNanos()));
    }

    /**
     * What the hook says when its store cannot be asked at all (a client of {@code fence serve} that
     * cannot reach the server): the same lines as a hook whose store is down. Pushed symbolic refs are
     * judged by their names only; refusing them is the caller's ({@link SymbolicRefs#unjudgedLines}).
     *
     * @param problem what went wrong, for the message
     * @param failClosed refuse tokenless pushes too, whatever {@code on-store-down} says (for a server
     *     that refused the hook's credential: a configuration error, not an outage)
     */
    public Result unavailable(
            HookConfig config,
            Map<String, String> env,
            Path gitDir,
            InputStream stdin,
            String problem,
            boolean failClosed) {
        Ancestry ancestry = gitDir != null ? new GitAncestry(env, gitDir, config.git()) : Admission.NO_ANCESTRY;
        // Symbolic refs are the caller's: with no verdict, it refuses them all (SymbolicRefs.unjudgedLines).
        return judge(config, env, gitDir, stdin, null, ref -> null, null, (push, policy, down) -> {
                    down[0] = true;
                    return Admission.storeDown(push, failClosed ? policy.failingClosed() : policy, problem, ancestry);
                })
                .result();
    }

    /** Decides a parsed push that touches fenced refs; sets {@code down[0]} when the store did not answer. */
    @FunctionalInterface
    private interface Decider {
        Verdict decide(PushAttempt push, FencePolicy policy, boolean[] down);
    }

    private Judgement judge(
            HookConfig config,
            Map<String, String> env,
            Path gitDir,
            InputStream stdin,
            String storeUrl,
            SymbolicRefs.Resolver symbolic,
            CaseAliases cases,
            Decider decider) {
        HookEnvironment where;
        List<RefUpdate> updates;
        try {
            where = HookEnvironments.detect(env, gitDir, config);
            updates = new HookInputParser().parse(stdin);
        } catch (InvalidInputException e) {
            return new Judgement(
                    new Result(
                            1, List.of("REJECTED ref=- reason=" + Reason.MALFORMED.code(), "fence: " + e.getMessage())),
                    Reason.MALFORMED.code());
        }
        String prefix = where.linePrefix();
        if (updates.isEmpty()) {
            return new Judgement(new Result(0, List.of()), "empty");
        }
        String unnameable = gitDir != null ? HostCharset.unnameable(updates) : null;
        if (unnameable != null) {
            Fenced f = new Fenced("-", null, 0, 0, Reason.BAD_CONFIG, null, null, null);
            return new Judgement(
                    new Result(
                            1,
                            List.of(
                                    prefix + FencedMessage.machineLine(f),
                                    prefix + "fence: " + HostCharset.problem(unnameable))),
                    Reason.BAD_CONFIG.code());
        }
        FencePolicy policy = config.policy();
        if (cases == null) {
            cases = gitDir != null ? CaseAliases.measure(env, gitDir, updates) : CaseAliases.none();
        }
        SymbolicRefs refs = symbolic != null
                ? SymbolicRefs.resolvedBy(symbolic)
                : gitDir != null ? SymbolicRefs.of(env, gitDir, config.git()) : null;
        if (refs != null) {
            // Git updates a symbolic ref's target, not the name the hook sees (see SymbolicRefs).
            SymbolicRefs.Screened screened = refs.screen(updates, policy, cases.ignoresCase());
            if (!screened.refusals().isEmpty()) {
                return new Judgement(new Result(1, screened.lines(prefix)), Reason.SYMBOLIC_REF.code());
            }
            updates = screened.updates();
        }
        List<String> namespaced = namespacedRefusals(updates, policy, prefix);
        if (!namespaced.isEmpty()) {
            return new Judgement(new Result(1, namespaced), Reason.NAMESPACED_REF.code());
        }
        // On a repository whose file system ignores case, another spelling of a fenced ref is that ref, and
        // another spelling of the push's namespace is that namespace.
        List<String> aliased = cases.refusals(updates, policy, prefix, GitNamespace.of(env));
        if (!aliased.isEmpty()) {
            return new Judgement(new Result(1, aliased), Reason.REF_CASE_ALIAS.code());
        }
        PushOptions options;
        try {
            options = PushOptionsReader.read(env);
        } catch (InvalidInputException e) {
            return new Judgement(malformedOptions(where, updates, policy, storeUrl, e), Reason.MALFORMED.code());
        }
        PushAttempt push = where.attempt(options, updates);
        if (!touchesFenced(updates, policy)) {
            return new Judgement(new Result(0, List.of()), "untouched");
        }
        boolean[] storeDown = new boolean[1];
        Verdict verdict = decider.decide(push, policy, storeDown);
        return new Judgement(render(verdict, prefix), storeDown[0] ? Reason.STORE_DOWN.code() : reasonOf(verdict));
    }

    /**
     * Refusals of pushed refs that write a fenced ref of a git namespace from outside it: {@code
     * refs/namespaces/t1/refs/heads/main} is branch {@code main} of namespace {@code t1}, which fence leases,
     * judges and records as repository {@code <repo-id>//t1}. Judged under its stored name it would be another
     * resource (or none, as {@code refs/heads/**} does not match it), so the tenant's holder would be
     * overwritten with no event on its branch. Empty when there is none.
     */
    static List<String> namespacedRefusals(List<RefUpdate> updates, FencePolicy policy, String prefix) {
        List<String> lines = new ArrayList<>();
        for (RefUpdate u : updates) {
            if (GitNamespace.fencedInside(u.ref(), policy, false)) {
                String[] stored = GitNamespace.split(u.ref());
                String ns = stored[0];
                String ref = stored[1];
                lines.add(prefix + "REJECTED ref=" + u.ref() + " reason=" + Reason.NAMESPACED_REF.code());
                lines.add(prefix + "fence: " + dev.fence.core.Printable.escape(u.ref(), 200) + " is " + ref
                        + " of git namespace " + dev.fence.core.Printable.escape(ns, 200)
                        + ", a fenced branch; push it through that namespace (GIT_NAMESPACE="
                        + dev.fence.core.Printable.escape(ns, 200)
                        + "), where it is judged and recorded as that repository's branch.");
            }
        }
        return lines;
    }

    /** True when any update is to a fenced ref (a loop: a hook process need not load streams for it). */
    private static boolean touchesFenced(List<RefUpdate> updates, FencePolicy policy) {
        for (RefUpdate u : updates) {
            if (policy.isFenced(u.ref())) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when the repository at {@code gitDir} ignores case in ref names and an update is to another
     * spelling of a fenced ref ({@link CaseAliases}): such a ref is closed with the fenced ones.
     */
    private static boolean touchesFencedIgnoringCase(List<RefUpdate> updates, FencePolicy policy, Path gitDir) {
        if (gitDir == null || !CaseAliases.ignoresCase(gitDir)) {
            return false;
        }
        for (RefUpdate u : updates) {
            if (CaseAliases.foldsIntoFenced(u.ref(), policy)) {
                return true;
            }
        }
        return false;
    }

    /** The push's reason code for metrics (see {@link Judgement#reason()}). */
    static String reasonOf(Verdict verdict) {
        if (!verdict.refusals().isEmpty()) {
            return verdict.refusals().get(0).fenced().reason().code();
        }
        for (RefDecision d : verdict.decisions()) {
            if (d instanceof RefDecision.Admitted a) {
                return a.reason().code();
            }
        }
        return "untouched";
    }

    private Verdict judge(
            PushAttempt push,
            FencePolicy policy,
            String url,
            Ancestry ancestry,
            boolean[] storeDown,
            long waitedNanos) {
        long full = policy.storeTimeout().toMillis();
        long first = Math.max(1, full - waitedNanos / 1_000_000);
        ExecutorService worker = workers != null
                ? workers
                : Executors.newSingleThreadExecutor(r -> {
                    Thread t = new Thread(r, "fence-admission");
                    t.setDaemon(true);
                    return t;
                });
        LeaseStore[] opened = new LeaseStore[1];
        // As in the one-shot hook: a verdict the store thread began writing is waited for, one it had not
        // begun is abandoned and then never written (see Admitter).
        AtomicInteger gate = new AtomicInteger(0);
        try {
            Future<Verdict> f;
            try {
                f = worker.submit(() -> {
                    opened[0] = openStore.apply(url);
                    return new AdmissionService(opened[0], policy, clock, proofs)
                            .admit(push, ancestry, Map.of(), () -> gate.compareAndSet(0, 1));
                });
            } catch (RejectedExecutionException e) {
                // fence serve's bounded store pool is full (a hung store holds its threads): the store
                // cannot be asked now, which is what store-down means.
                storeDown[0] = true;
                return Admission.storeDown(push, policy, "the server has too many store calls waiting", ancestry);
            }
            try {
                try {
                    return f.get(first, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    if (gate.compareAndSet(0, 2)) {
                        throw e;
                    }
                    return f.get(full, TimeUnit.MILLISECONDS);
                }
            } catch (TimeoutException e) {
                f.cancel(true);
                storeDown[0] = true;
                return Admission.storeDown(push, policy, "no answer within " + first + " ms", ancestry);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof StoreUnavailableException || cause instanceof ConfigException) {
                    storeDown[0] = true;
                    return Admission.storeDown(push, policy, cause.getMessage(), ancestry);
                }
                if (cause instanceof RuntimeException re) {
                    throw re;
                }
                throw new IllegalStateException(cause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                storeDown[0] = true;
                return Admission.storeDown(push, policy, "interrupted", ancestry);
            }
        } finally {
            if (worker != workers) {
                worker.shutdownNow();
            }
            if (opened[0] != null) {
                opened[0].close();
            }
        }
    }

    /** Renders a verdict: every refusal in the FENCED format, then warnings. */
    static Result render(Verdict verdict, String prefix) {
        List<String> lines = new ArrayList<>();
        for (RefDecision.Refused r : verdict.refusals()) {
            for (String line : FencedMessage.lines(r.fenced())) {
                lines.add(prefix + line);
            }
        }
        for (String w : verdict.warnings()) {
            lines.add(prefix + w);
        }
        return new Result(verdict.accepted() ? 0 : 1, lines);
    }

    private Result malformedOptions(
            HookEnvironment where,
            List<RefUpdate> updates,
            FencePolicy policy,
            String storeUrl,
            InvalidInputException problem) {
        String prefix = where.linePrefix();
        List<String> lines = new ArrayList<>();
        lines.add(prefix + "REJECTED ref=- reason=" + Reason.MALFORMED.code());
        lines.add(prefix + "fence: " + problem.getMessage());
        lines.add(prefix + "fence: the push was refused as a whole; nothing was recorded as accepted.");
        PushAttempt push = where.attempt(PushOptions.none(), updates);
        List<LedgerEvent> events = new ArrayList<>();
        for (RefUpdate u : updates) {
            if (policy.isFenced(u.ref())) {
                events.add(Admission.pushEvent(
                        push,
                        u,
                        Resources.forRef(where.repoId(), u.ref()),
                        null,
                        EventType.REJECT,
                        0,
                        Reason.MALFORMED,
                        problem.getMessage(),
                        clock.instant()));
            }
        }
        recordQuietly(storeUrl, policy, events);
        return new Result(1, lines);
    }

    private void recordQuietly(String url, FencePolicy policy, List<LedgerEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        Thread t = new Thread(() -> {
            try (LeaseStore s = openStore.apply(url)) {
                s.append(events);
            } catch (RuntimeException e) {
                // Best effort: the push is refused either way, and a store that is down cannot record it.
            }
        });
        t.setDaemon(true);
        t.start();
        try {
            t.join(policy.storeTimeout().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Result brokenConfig(Map<String, String> env, Path gitDir, InputStream stdin, ConfigException problem) {
        return misconfigured(env, gitDir, stdin, problem.getMessage(), FencePolicy.defaults());
    }

    /**
     * What a hook says when its configuration is broken or incomplete, or its server refused its
     * credential ({@link Reason#BAD_CONFIG}): a push that touches a ref {@code fenced} fences is refused as
     * a whole with one machine line ({@code resource=- ref=- token=0 current=0}); any other push is
     * accepted with a warning (on a repository that ignores case in ref names, another spelling of a fenced
     * ref counts as fenced). The curl shim says the same when its own settings are missing or refused.
     *
     * @param fenced the patterns that decide what is closed (a broken file's defaults, or the policy the
     *     remote hook has)
     */
    public static Result misconfigured(
            Map<String, String> env, Path gitDir, InputStream stdin, String problem, FencePolicy fenced) {
        String prefix = "";
        List<RefUpdate> updates;
        try {
            prefix = HookEnvironments.detect(env, gitDir, (String) null).linePrefix();
        } catch (RuntimeException e) {
            // no host prefix then
        }
        try {
            updates = new HookInputParser().parse(stdin);
        } catch (RuntimeException e) {
            updates = null;
        }
        if (updates != null && !touchesFenced(updates, fenced) && !touchesFencedIgnoringCase(updates, fenced, gitDir)) {
            return new Result(
                    0,
                    List.of(prefix + "warning: fence configuration is broken (" + problem
                            + "); this push touches no fenced ref and was accepted"));
        }
        Fenced f = new Fenced("-", null, 0, 0, Reason.BAD_CONFIG, null, null, null);
        return new Result(
                1,
                List.of(
                        prefix + FencedMessage.machineLine(f),
                        prefix + "fence: the hook's configuration is broken, so fenced refs are closed: " + problem));
    }
}
