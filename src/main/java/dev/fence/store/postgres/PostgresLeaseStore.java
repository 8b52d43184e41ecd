package dev.fence.store.postgres;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.EventType;
import dev.fence.core.Identities;
import dev.fence.core.InternalException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.StoreIdentity;
import dev.fence.core.StoreUnavailableException;
import dev.fence.core.Tip;
import dev.fence.store.PrunePacing;
import dev.fence.store.QueuedCall;
import dev.fence.store.StoreOptions;
import dev.fence.store.StoreSetup;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.postgresql.Driver;

/**
 * The shared {@link LeaseStore} on PostgreSQL, the choice for high availability: with a synchronous
 * standby, a grant is acknowledged only once the standby has it, so a failover to that standby loses no
 * acknowledged grant.
 *
 * <p><b>Transactions:</b> every operation is one transaction at READ COMMITTED. Writers lock the rows they
 * change ({@code SELECT … FOR UPDATE}, in name order when there are several) before they read them, so
 * concurrent processes never decide on the same counter value; a resource seen for the first time gets its
 * row first ({@code INSERT … ON CONFLICT DO NOTHING}, which waits for a concurrent insert of the same name).
 * Reads that must agree with each other are one statement, run without a transaction of their own
 * (autocommit: one round trip); the snapshots that this instance's threads ask for at the same time share
 * one such statement ({@link #gathered}). Deadlocks and serialization failures are retried while the
 * timeout lasts.
 *
 * <p><b>Commits</b> are one call of the server-side function {@code fence.commit_1} ({@code functions.sql}),
 * which checks and applies a commit's writes and appends its events in one round trip, whatever their
 * number. Commits that this instance's threads make at the same time share that call and its transaction
 * ({@link #combined}: group commit), each still all or nothing. The functions carry their version in their
 * names and are created with the schema, or by the first fence that finds them missing.
 *
 * <p><b>Identity and rollbacks:</b> the identity row records, besides the generation, a marker that a
 * rollback of the data cannot preserve: the cluster's {@code system_identifier}, the current WAL timeline
 * (which changes on every promotion of a standby and every point-in-time recovery), and the transaction id
 * that wrote the row (which a logical restore of a dump does not keep). Every call that grants, reads
 * state or commits first compares the stored marker with the live server. On a mismatch the store starts
 * a new generation before it does anything else: generation and proof key from the caller's candidate, the
 * floor from the database's clock ({@code clock_timestamp()}), raised above the old floor and every token
 * the rows hold, so tokens never go back even if the data did. Leases of an older generation read as no
 * lease, and every resource's version moves out of reach of snapshots taken before, so a decision made
 * under the old generation can only conflict. A promotion therefore always starts a new generation, even
 * of a synchronous standby that lost nothing: outstanding leases are void and their holders acquire again.
 * The first identity takes its floor from the database's clock in the same way; {@code candidate.floor()}
 * and {@code candidate.createdAt()} are never used.
 *
 * <p><b>Durability:</b> grants are as durable as the server's {@code synchronous_commit} and {@code
 * synchronous_standby_names} make them, except that fence's sessions never commit with {@code
 * synchronous_commit} {@code off} or {@code local}: where the server's configuration, the database or the role
 * says so, each new session sets it to {@code on} for itself (a crash could otherwise lose acknowledged grants
 * with no new timeline to give it away). {@link #setup()} and {@link #warnings()} say when the set-up is less
 * durable than a synchronous standby makes it. fence never cancels a commit: its
 * sessions run with {@code statement_timeout = 0}, because PostgreSQL answers a commit whose wait for the
 * standby is cancelled with success and a warning; a commit that comes back with any warning is reported
 * as {@link StoreUnavailableException}, not as done.
 *
 * <p><b>Bounded waits:</b> every call returns or throws {@link StoreUnavailableException} within {@link
 * StoreOptions#timeout()}: each read from the server waits at most the time left (the socket's timeout),
 * a lock wait ends at {@code lock_timeout}, and connecting waits at most the timeout rounded up to whole
 * seconds (the driver's unit). A call that fails before its commit was sent has written nothing; one whose
 * commit was sent but not answered may have taken effect (an acquire then skips a token, which is safe).
 *
 * <p><b>Connections:</b> a pool of at most {@value #POOL_SIZE} connections (one for a hook, {@link
 * StoreOptions#singleConnection()}). A pooled connection found broken is replaced and the call retried once
 * if its commit had not been sent; several hosts in the URL are tried in order for the one that is primary.
 *
 * <p><b>Time:</b> the database's clock decides lease expiry, ledger times and retention, whatever a
 * client's clock says ({@link #nowMillis}); so do floors and creation times. Only a test's clock ({@link
 * StoreOptions#callerClock()}) replaces it, and then for lease and ledger times, never for floors.
 *
 * <p><b>Ledger retention</b> is a setting of the store ({@code fence.settings}, kept across generations),
 * taken from the first opener's {@link StoreOptions#retention()} when there is none; a URL asking for
 * another value is refused by every call that appends ({@link #retention} changes it for everyone). Every
 * write that appends events also deletes up to {@value StoreOptions#PRUNE_MIN} events (or {@value
 * StoreOptions#PRUNE_PER_EVENT} per event it appends, if more) older than it, on the store's clock, so
 * the ledger stays bounded without a separate job, a backlog drains over many writes, and the part a
 * verdict pays stays small; after a write that found no backlog, this instance's writes skip the look for
 * a second ({@link PrunePacing}).
 *
 * <p><b>Schema:</b> tables live in the schema {@code fence}, created with them on first use if the role may
 * ({@code CREATE} on the database), or pre-created empty by an administrator ({@code CREATE SCHEMA fence
 * AUTHORIZATION <role>}). A schema {@code fence} holding other tables is refused.
 *
 * <p>Thread-safe.
 */
public final class PostgresLeaseStore implements LeaseStore {
    /** Must match the row {@code schema.sql} writes into {@code fence.schema_info}. */
    static final int SCHEMA_VERSION = 1;

    /**
     * The most connections (so transactions at once) of one instance, opened as needed. 16 made fence serve
     * at 64 hooks about 10 % faster in two runs, within this machine's run-to-run noise; not taken.
     */
    private static final int POOL_SIZE = 8;

    /** Attempts of one call when a connection breaks before its commit is sent. */
    private static final int CONNECTION_ATTEMPTS = 2;

    private static final Executor DIRECT = Runnable::run;

    /** Loaded with the first store. */
    private static final class Jdbc {
        static final Driver DRIVER = new Driver();

        private Jdbc() {}
    }

    private final PostgresUrl url;
    private final String description;
    private final Duration timeout;
    private final long timeoutNanos;
    /** The retention the opener asked for (its URL's, or the default); the store's own setting decides. */
    private final long askedRetentionMillis;

    private final boolean retentionAsked;
    private final boolean callerClock;
    private final PrunePacing pruning = new PrunePacing();
    private final ConnectionPool pool;

    private volatile boolean schemaReady;
    private volatile boolean closed;

    /** The identity the last committed call ran under, for {@link #identityOf}. */
    private volatile StoreIdentity lastIdentity;

    private PostgresLeaseStore(PostgresUrl url, StoreOptions options) {
        this.url = url;
        this.description = url.describe();
        this.timeout = options.timeout();
        this.timeoutNanos = Math.max(1, saturatedNanos(options.timeout()));
        this.askedRetentionMillis = Math.max(0, saturatedMillis(options.retention()));
        this.retentionAsked = options.retentionAsked();
        this.callerClock = options.callerClock();
        this.pool = new ConnectionPool(options.singleConnection() ? 1 : POOL_SIZE, this::connect);
    }

    /**
     * Opens the store at {@code url}, {@code postgresql://user[:password]@host[:port][,host[:port]…]/database}
     * (or {@code postgres://…}; a query string is ignored here). Connects on first use; a process that makes
     * only a few calls ({@link StoreOptions#singleConnection()}) connects now, and a failure to is reported by
     * its first call.
     *
     * @throws dev.fence.core.ConfigException for a malformed URL
     */
    public static PostgresLeaseStore open(String url, StoreOptions options) {
        Objects.requireNonNull(options, "options");
        PostgresLeaseStore store = new PostgresLeaseStore(PostgresUrl.parse(url), options);
        if (options.singleConnection()) {
            store.connectNow();
        }
        return store;
    }

    private void connectNow() {
        try {
            run("connect", tx -> null);
        } catch (StoreUnavailableException e) {
            // The first call connects again and reports it.
        }
    }

    // --- the SPI ------------------------------------------------------------------------------------

    @Override
    public StoreIdentity identity(StoreIdentity candidate) {
        Objects.requireNonNull(candidate, "candidate");
        return run("read identity", tx -> current(tx, () -> candidate).identity());
    }

    /** {@inheritDoc} Answered from the last call when it ran under {@code generation}. */
    @Override
    public StoreIdentity identityOf(String generation, Supplier<StoreIdentity> candidate) {
        StoreIdentity last = lastIdentity;
        if (last != null && last.generation().equals(generation)) {
            return last;
        }
        return run("read identity", tx -> current(tx, candidate).identity());
    }

    @Override
    public AcquireResult acquire(
            String resource,
            String holder,
            long ttlMillis,
            Instant now,
            String grantSha,
            long ownToken,
            Supplier<StoreIdentity> candidate) {
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(now, "now");
        Objects.requireNonNull(candidate, "candidate");
        requirePositiveTtl(ttlMillis);
        return run("acquire", tx -> {
            Current cur = current(tx, candidate);
            ResourceState state = lockOrCreate(tx, resource, cur);
            // A lease of an older generation is void: it neither blocks a grant nor lapses into an EXPIRE event.
            Lease previous = state.lease() != null
                            && state.lease().token() > cur.identity().floor()
                    ? state.lease()
                    : null;
            Instant at = Instant.ofEpochMilli(nowMillis(now, tx));
            if (previous != null && previous.isLive(at) && LeaseStore.blocks(previous, holder, ownToken)) {
                return new AcquireResult.Busy(resource, previous.holder(), previous.token(), previous.expiresAt());
            }
            List<LedgerEvent> events = new ArrayList<>(2);
            if (previous != null && !previous.released() && !at.isBefore(previous.expiresAt())) {
                events.add(LedgerEvent.lease(
                        previous.expiresAt(), EventType.EXPIRE, resource, previous.holder(), previous.token()));
            }
            long token = cur.identity().nextToken(state.latestGranted(), at.toEpochMilli());
            Instant expiresAt = at.plusMillis(ttlMillis);
            Lease lease = new Lease(holder, token, at, expiresAt, false, grantSha);
            writeState(
                    tx,
                    cur,
                    new ResourceState(
                            resource,
                            state.version() + 1,
                            token,
                            state.highestAccepted(),
                            lease,
                            state.baseToken(),
                            state.baseSha(),
                            state.lastTokenWriteSha(),
                            state.tip()));
            events.add(LedgerEvent.lease(at, EventType.GRANT, resource, holder, token));
            insertEvents(tx, events);
            prune(tx, at.toEpochMilli(), events.size());
            return new AcquireResult.Granted(
                    resource, holder, token, cur.identity().generation(), at, expiresAt, previous, state.tip());
        });
    }

    @Override
    public LeaseCheck renew(String resource, String holder, long token, long ttlMillis, Instant now) {
        Objects.requireNonNull(now, "now");
        requirePositiveTtl(ttlMillis);
        return run("renew", tx -> {
            Current cur = current(tx, null);
            ResourceState state = lock(tx, resource, cur);
            if (state == null) {
                return new LeaseCheck.Refused(0, null);
            }
            if (!state.isCurrentGrant(holder, token)) {
                return new LeaseCheck.Refused(state.latestGranted(), state.lease());
            }
            Lease old = state.lease();
            Instant at = Instant.ofEpochMilli(nowMillis(now, tx));
            Lease renewed = new Lease(
                    old.holder(), old.token(), old.grantedAt(), at.plusMillis(ttlMillis), false, old.grantSha());
            writeState(tx, cur, state.withLease(renewed));
            if (!at.isBefore(old.expiresAt())) {
                insertEvents(
                        tx,
                        List.of(
                                LedgerEvent.lease(old.expiresAt(), EventType.EXPIRE, resource, holder, token),
                                LedgerEvent.lease(at, EventType.RENEW, resource, holder, token)));
                prune(tx, at.toEpochMilli(), 2);
            }
            return new LeaseCheck.Ok(renewed);
        });
    }

    @Override
    public LeaseCheck release(String resource, String holder, long token, Instant now) {
        Objects.requireNonNull(now, "now");
        return run("release", tx -> {
            Current cur = current(tx, null);
            ResourceState state = lock(tx, resource, cur);
            if (state == null) {
                return new LeaseCheck.Refused(0, null);
            }
            if (!state.isCurrentGrant(holder, token)) {
                return new LeaseCheck.Refused(state.latestGranted(), state.lease());
            }
            Lease old = state.lease();
            Instant at = Instant.ofEpochMilli(nowMillis(now, tx));
            Lease released = new Lease(old.holder(), old.token(), old.grantedAt(), at, true, old.grantSha());
            writeState(tx, cur, state.withLease(released));
            insertEvents(tx, List.of(LedgerEvent.lease(at, EventType.RELEASE, resource, holder, token)));
            prune(tx, at.toEpochMilli(), 1);
            return new LeaseCheck.Ok(released);
        });
    }

    @Override
    public LeaseCheck moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
        return run("move grant sha", tx -> {
            Current cur = current(tx, null);
            ResourceState state = lock(tx, resource, cur);
            if (state == null) {
                return new LeaseCheck.Refused(0, null);
            }
            if (!state.isCurrentGrant(holder, token)
                    || !Objects.equals(state.lease().grantSha(), expectedSha)) {
                return new LeaseCheck.Refused(state.latestGranted(), state.lease());
            }
            Lease old = state.lease();
            Lease moved = new Lease(old.holder(), old.token(), old.grantedAt(), old.expiresAt(), false, newSha);
            writeState(tx, cur, state.withLease(moved));
            return new LeaseCheck.Ok(moved);
        });
    }

    @Override
    public Map<String, ResourceState> snapshot(Collection<String> resources) {
        return gathered(List.copyOf(new LinkedHashSet<>(resources)), null).states();
    }

    /** {@inheritDoc} One statement: the identity check and the rows in one consistent view. */
    @Override
    public IdentifiedSnapshot identityAndSnapshot(Collection<String> resources, Supplier<StoreIdentity> candidate) {
        return gathered(List.copyOf(new LinkedHashSet<>(resources)), candidate);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Versions are checked before counters: a write computed from an older snapshot legitimately
     * carries a lower counter than the stored one, and that is a {@link CommitResult.Conflict}, not a
     * bug. Naming one resource in two writes is a bug ({@link InternalException}). A commit that finds the
     * marker changed starts the new generation first, so writes decided under the old one conflict.
     */
    @Override
    public CommitResult commit(List<ResourceWrite> writes, List<LedgerEvent> events) {
        Set<String> seen = new HashSet<>();
        for (ResourceWrite w : writes) {
            if (!seen.add(w.resource())) {
                throw new InternalException("commit names resource '" + w.resource() + "' in more than one write");
            }
        }
        if (writes.isEmpty() && events.isEmpty()) {
            return new CommitResult.Committed();
        }
        if (closed) {
            throw new InternalException("PostgreSQL store " + description + " used after close (commit)");
        }
        return combined(new Pending(writes, events, System.nanoTime() + timeoutNanos));
    }

    // --- group commit -------------------------------------------------------------------------------

    /** Commits waiting for a transaction, oldest first. */
    private final ConcurrentLinkedDeque<Pending> pending = new ConcurrentLinkedDeque<>();

    /** Held by the thread running a transaction of queued commits. */
    private final ReentrantLock committing = new ReentrantLock();

    /** The most commits one transaction takes: enough to share a busy server's, few enough to stay short. */
    private static final int MOST_PER_TRANSACTION = 64;

    /** The longest a waiting caller sleeps before looking again, should a wake-up have gone astray. */
    private static final long MOST_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /**
     * Group commit. A commit's cost on PostgreSQL is mostly the transaction around it (its round trips, its
     * WAL flush), not its rows; so a commit queues itself, and whichever waiting thread gets {@link
     * #committing} takes the queued commits (up to {@link #MOST_PER_TRANSACTION}) and runs them in one
     * transaction, one call of {@code fence.commit_1} that applies them one after another, each all or
     * nothing, as if each had been a transaction of its own. No caller has an answer before the commit that
     * made it durable; if the transaction fails, every commit in it fails and none is kept. A caller waits
     * at most until its own deadline while queued; once its commit is taken, until the transaction's end,
     * which is bounded by the earliest deadline among the commits it took. A hook makes one commit: it
     * takes the lock at once and runs alone.
     */
    private CommitResult combined(Pending own) {
        awaitTurn(own, pending, committing, this::lead);
        return own.result();
    }

    /**
     * Queues {@code own} and waits until it is done, leading ({@code lead}, under {@code lock}) whenever no
     * other waiting thread does; throws busy at {@code own}'s deadline, or when interrupted, if no leader has
     * taken it by then.
     */
    private <C extends QueuedCall> void awaitTurn(C own, Deque<C> queue, ReentrantLock lock, Runnable lead) {
        queue.addLast(own);
        boolean interrupted = false;
        try {
            while (true) {
                if (own.isDone()) {
                    return;
                }
                // Cleared here, so that a thread that leads does so uninterrupted: an interrupt meant for
                // its own call must not fail the others' calls.
                interrupted |= Thread.interrupted();
                if (interrupted && own.cancel()) {
                    queue.remove(own);
                    throw new StoreUnavailableException(
                            "interrupted while waiting for PostgreSQL store " + description);
                }
                long left = own.deadline() - System.nanoTime();
                if (left <= 0 && own.cancel()) {
                    queue.remove(own);
                    throw busy();
                }
                // Only a caller still waiting leads: one whose call is done returns without running others'.
                if (!own.isDone() && lock.tryLock()) {
                    try {
                        lead.run();
                    } finally {
                        lock.unlock();
                        wakeNext(queue);
                    }
                    continue;
                }
                LockSupport.parkNanos(this, left > 0 ? Math.min(left, MOST_PARK_NANOS) : MOST_PARK_NANOS);
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Whether a call a leader has just taken is to be answered busy instead of run: queued for more than
     * three quarters of its time (the process is overloaded), its deadline would also end the transaction
     * of every call taken with it.
     */
    private boolean tooLate(QueuedCall c, long now) {
        return c.deadline() - now < timeoutNanos / 4;
    }

    /**
     * Under {@link #committing}: runs queued commits in one transaction and hands each caller its outcome.
     * Never throws: a failure becomes the outcome of every commit taken.
     */
    private void lead() {
        List<Pending> batch = new ArrayList<>();
        try {
            Set<String> written = new HashSet<>();
            long deadline = Long.MAX_VALUE;
            long now = System.nanoTime();
            for (Iterator<Pending> it = pending.iterator(); it.hasNext() && batch.size() < MOST_PER_TRANSACTION; ) {
                Pending p = it.next();
                // A commit writing a resource that one taken already writes waits for the next transaction:
                // it is to see that write, as if the two had run one after the other.
                if (p.writes.stream().anyMatch(w -> written.contains(w.resource()))) {
                    continue;
                }
                it.remove();
                // Added before it is taken, so that whatever happens next, a taken commit is finished below.
                batch.add(p);
                if (!p.take()) {
                    batch.remove(batch.size() - 1);
                } else if (tooLate(p, now)) {
                    batch.remove(batch.size() - 1);
                    p.finish(busy());
                } else {
                    deadline = Math.min(deadline, p.deadline());
                    for (ResourceWrite w : p.writes) {
                        written.add(w.resource());
                    }
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            long until = deadline;
            finish(batch, run("commit", false, until, tx -> applyAll(tx, batch)));
        } catch (Refused | ConfigException e) {
            if (batch.size() == 1) {
                batch.get(0).finish(e instanceof Refused r ? unavailable(r.cause, "commit") : e);
                return;
            }
            // One commit's rows broke a rule of the schema (or its events met a retention setting the URL
            // contradicts) and took the others' transaction with it: each runs alone, so that the failure
            // stays with the commits it belongs to.
            for (Pending p : batch) {
                try {
                    finish(List.of(p), run("commit", false, p.deadline(), tx -> applyAll(tx, List.of(p))));
                } catch (Refused alone) {
                    p.finish(unavailable(alone.cause, "commit"));
                } catch (Throwable alone) {
                    p.finish(alone);
                }
            }
        } catch (Throwable e) {
            for (Pending p : batch) {
                p.finish(e);
            }
        }
    }

    private StoreUnavailableException busy() {
        return new StoreUnavailableException("PostgreSQL store " + description + " is busy: this process's calls"
                + " queued for longer than the timeout of " + Durations.format(timeout)
                + " allows; retry, or raise ?timeout= in the store URL");
    }

    private static void finish(List<Pending> batch, List<Object> outcomes) {
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).finish(outcomes.get(i));
        }
    }

    /**
     * The commit statement failed on the data it was given (a data or integrity error, a check of {@code
     * fence.commit_1}), not on the store: nothing was sent to commit.
     */
    private static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final SQLException cause;

        Refused(SQLException cause) {
            super(cause.getMessage(), cause, false, false);
            this.cause = cause;
        }
    }

    /** How many commits wait for a transaction; for tests. */
    int queuedCommits() {
        return queued(pending);
    }

    /** How many calls of {@code queue} are still queued. */
    private static int queued(Deque<? extends QueuedCall> queue) {
        int n = 0;
        for (QueuedCall c : queue) {
            if (c.isQueued()) {
                n++;
            }
        }
        return n;
    }

    /** Wakes the caller of the oldest call still queued, to take the lock and run it. */
    private static void wakeNext(Deque<? extends QueuedCall> queue) {
        for (QueuedCall c : queue) {
            if (c.isQueued()) {
                c.wake();
                return;
            }
        }
    }

    /**
     * The commits of {@code batch} in {@code tx}: a {@link CommitResult} or a {@link RuntimeException} for
     * each, in order. A marker that no longer matches starts a new generation first, under which every
     * write decided before it conflicts.
     */
    private List<Object> applyAll(Tx tx, List<Pending> batch) throws SQLException {
        List<ResourceWrite> writes = new ArrayList<>();
        List<LedgerEvent> events = new ArrayList<>();
        List<Integer> writeGroups = new ArrayList<>();
        List<Integer> eventGroups = new ArrayList<>();
        for (int g = 0; g < batch.size(); g++) {
            Pending p = batch.get(g);
            writes.addAll(p.writes);
            events.addAll(p.events);
            writeGroups.addAll(Collections.nCopies(p.writes.size(), g + 1));
            eventGroups.addAll(Collections.nCopies(p.events.size(), g + 1));
        }
        for (int attempt = 0; ; attempt++) {
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("commit.apply"))) {
                int i = 0;
                st.setInt(++i, batch.size());
                st.setArray(++i, tx.c.createArrayOf("int4", writeGroups.toArray()));
                i = bindWrites(tx, st, i, writes);
                st.setArray(++i, tx.c.createArrayOf("int4", eventGroups.toArray()));
                bindEvents(tx, st, i, events, callerClock);
                List<Object> outcomes = new ArrayList<>(batch.size());
                long newest = Long.MIN_VALUE;
                int appended = 0;
                ResultSet result;
                try {
                    result = tx.query(st);
                } catch (SQLException e) {
                    String state = e.getSQLState() == null ? "" : e.getSQLState();
                    if (state.startsWith("22") || state.startsWith("23") || state.startsWith("P0")) {
                        throw new Refused(e);
                    }
                    throw e;
                }
                try (ResultSet rs = result) {
                    for (int g = 0; g < batch.size(); g++) {
                        if (!rs.next() || rs.getInt("o_group") != g + 1) {
                            throw new InternalException("fence.commit_1 did not answer for commit " + (g + 1));
                        }
                        Check check = readCheck(rs);
                        String outcome = rs.getString("o_outcome");
                        if ("identity".equals(outcome)) {
                            if (attempt > 0) {
                                throw new StoreUnavailableException("PostgreSQL store " + description
                                        + " could not settle its identity (its identity row keeps changing); retry");
                            }
                            rs.close();
                            settle(tx, check, null);
                            outcomes = null;
                            break;
                        }
                        tx.current = new Current(check.stored(), check.versionBase());
                        Pending p = batch.get(g);
                        switch (outcome) {
                            case "conflict" -> outcomes.add(new CommitResult.Conflict(rs.getString("o_resource")));
                            case "lowered" -> outcomes.add(lowered(p.writes, rs));
                            case "committed" -> {
                                outcomes.add(new CommitResult.Committed());
                                if (!p.events.isEmpty()) {
                                    newest = Math.max(newest, newest(p.events, rs.getLong("o_now")));
                                    appended += p.events.size();
                                }
                            }
                            default -> throw new InternalException("fence.commit_1 answered '" + outcome + "'");
                        }
                    }
                }
                if (outcomes == null) {
                    continue;
                }
                if (appended > 0) {
                    prune(tx, newest, appended);
                }
                return outcomes;
            }
        }
    }

    /**
     * One caller's commit, queued for {@link #combined}. Its outcome is written by the thread that ran it
     * before the state turns to done, and read by its caller after it sees done (a volatile handoff).
     */
    private static final class Pending extends Handover {
        final List<ResourceWrite> writes;
        final List<LedgerEvent> events;

        Pending(List<ResourceWrite> writes, List<LedgerEvent> events, long deadline) {
            super(deadline);
            this.writes = List.copyOf(writes);
            this.events = List.copyOf(events);
        }

        /** Its {@link CommitResult}, once done; or its failure, thrown. */
        CommitResult result() {
            return (CommitResult) outcome();
        }
    }

    /**
     * A queued call whose leader hands its caller one outcome, written before the call is marked done and
     * read after the caller sees it done (the {@link QueuedCall}'s volatile handoff).
     */
    private abstract static class Handover extends QueuedCall {
        private Object outcome;

        Handover(long deadline) {
            super(deadline);
        }

        /** Settles it with a result or a {@link Throwable}, once, and wakes its caller. */
        final void finish(Object outcome) {
            if (isDone()) {
                return;
            }
            this.outcome = outcome;
            done();
        }

        /**
         * The result, to its caller; a failure is thrown anew in the caller's thread ({@link #thrown}), so that
         * the stack trace shows the caller (and the thread that ran it, as the cause).
         */
        final Object outcome() {
            if (outcome instanceof Throwable t) {
                throw thrown(t);
            }
            return outcome;
        }
    }

    /**
     * A failure a leader met, to throw in a caller's thread: anew where it is one of fence's, so that the
     * stack trace shows the caller (and the leader's, as the cause).
     */
    private static RuntimeException thrown(Throwable t) {
        if (t instanceof StoreUnavailableException e) {
            return new StoreUnavailableException(e.getMessage(), e);
        }
        if (t instanceof InternalException e) {
            return new InternalException(e.getMessage(), e);
        }
        if (t instanceof RuntimeException e) {
            return e;
        }
        return new InternalException("a PostgreSQL store call failed: " + t, t);
    }

    // --- gathered reads -----------------------------------------------------------------------------

    /** Snapshots waiting for a statement, oldest first. */
    private final ConcurrentLinkedDeque<Reading> readings = new ConcurrentLinkedDeque<>();

    /** Held by the thread running a statement of queued snapshots. */
    private final ReentrantLock reading = new ReentrantLock();

    /**
     * Gathered reads. The snapshots of a busy server's verdicts are one statement each, a round trip and a
     * backend's work dominated by the statement, not by its rows; so a snapshot queues itself, and whichever
     * waiting thread gets {@link #reading} takes the queued ones (up to {@link #MOST_PER_TRANSACTION}) and
     * reads all their resources, and the identity, in one statement: one consistent view, which each gets
     * its part of. When the identity must be written first (a new generation), each reads again alone, in
     * a transaction. The first call of a process reads alone, as it may have to create the schema.
     */
    private IdentifiedSnapshot gathered(List<String> names, Supplier<StoreIdentity> candidate) {
        if (closed) {
            throw new InternalException("PostgreSQL store " + description + " used after close (snapshot)");
        }
        long deadline = System.nanoTime() + timeoutNanos;
        if (schemaReady) {
            Reading own = new Reading(names, deadline);
            awaitTurn(own, readings, reading, this::leadReads);
            if (own.outcome() instanceof IdentifiedSnapshot s) {
                return s;
            }
            // The identity must be written: below, alone, within the same timeout.
        }
        return run("snapshot", false, deadline, tx -> readSnapshot(tx, names, candidate));
    }

    /** Under {@link #reading}: reads the queued snapshots in one statement and hands each caller its part. */
    private void leadReads() {
        List<Reading> batch = new ArrayList<>();
        try {
            long deadline = Long.MAX_VALUE;
            long now = System.nanoTime();
            Set<String> names = new LinkedHashSet<>();
            for (Reading r; batch.size() < MOST_PER_TRANSACTION && (r = readings.pollFirst()) != null; ) {
                batch.add(r);
                if (!r.take()) {
                    batch.remove(batch.size() - 1);
                } else if (tooLate(r, now)) {
                    batch.remove(batch.size() - 1);
                    r.finish(busy());
                } else {
                    deadline = Math.min(deadline, r.deadline());
                    names.addAll(r.names);
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            List<String> all = List.copyOf(names);
            IdentifiedSnapshot read = run("snapshot", true, deadline, tx -> {
                if (!tx.autocommit) {
                    // The schema went missing meanwhile: whatever is made anew is made with each caller's own
                    // candidate, by each caller.
                    throw new NeedsTransaction();
                }
                return readSnapshot(tx, all, null);
            });
            for (Reading r : batch) {
                Map<String, ResourceState> states = new LinkedHashMap<>();
                for (String name : r.names) {
                    states.put(name, read.states().get(name));
                }
                r.finish(new IdentifiedSnapshot(read.identity(), Collections.unmodifiableMap(states)));
            }
        } catch (NeedsTransaction e) {
            for (Reading r : batch) {
                r.finish(NEEDS_TRANSACTION);
            }
        } catch (Throwable e) {
            for (Reading r : batch) {
                r.finish(e);
            }
        }
    }

    /** How many snapshots wait for a statement; for tests. */
    int queuedReads() {
        return queued(readings);
    }

    /** A {@link Reading}'s outcome when it must read again in a transaction of its own. */
    private static final Object NEEDS_TRANSACTION = new Object();

    /**
     * One caller's snapshot, queued for {@link #gathered}: its outcome an {@link IdentifiedSnapshot}, or
     * {@link #NEEDS_TRANSACTION}.
     */
    private static final class Reading extends Handover {
        final List<String> names;

        Reading(List<String> names, long deadline) {
            super(deadline);
            this.names = names;
        }
    }

    private static InternalException lowered(List<ResourceWrite> writes, ResultSet rs) throws SQLException {
        String resource = rs.getString("o_resource");
        ResourceWrite w = writes.stream()
                .filter(x -> x.resource().equals(resource))
                .findFirst()
                .orElseThrow(() -> new InternalException("fence.commit_1 named a resource not written: " + resource));
        return new InternalException("a commit would lower the tokens of " + resource
                + " (counter " + rs.getLong("o_latest_granted") + " -> " + w.latestGranted()
                + ", highest accepted " + rs.getLong("o_highest_accepted") + " -> " + w.highestAccepted()
                + "); nothing was written");
    }

    @Override
    public void append(List<LedgerEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        run("append", tx -> {
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("events.append"))) {
                bindEvents(tx, st, 0, events, callerClock);
                try (ResultSet rs = tx.query(st)) {
                    rs.next();
                    prune(tx, newest(events, rs.getLong(1)), events.size());
                }
            }
            return null;
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>"Oldest" is append order ({@link LedgerEvent#seq()}), not {@link LedgerEvent#at()}, as for SQLite.
     */
    @Override
    public List<LedgerEvent> query(LedgerQuery query) {
        List<String> where = new ArrayList<>();
        List<Object> args = new ArrayList<>();
        filter(where, args, "resource", query.resource());
        filter(where, args, "repo", query.repo());
        filter(where, args, "ref", query.ref());
        filter(where, args, "holder", query.holder());
        if (query.since() != null) {
            where.add("at >= ?");
            args.add(ceilMillis(query.since()));
        }
        if (query.until() != null) {
            // Times are whole milliseconds: an event's is at or before until when it is at or before its floor
            // (toEpochMilli's).
            where.add("at <= ?");
            args.add(query.until().toEpochMilli());
        }
        String[] types = null;
        if (query.types() != null && !query.types().isEmpty()) {
            where.add("type = ANY (?)");
            types = query.types().stream().map(EventType::label).sorted().toArray(String[]::new);
        }
        String sql = PostgresSql.SQL.get("event.select")
                + (where.isEmpty() ? "" : "\n WHERE " + String.join(" AND ", where))
                + "\n"
                + PostgresSql.SQL.get("event.select.order");
        String[] typeArray = types;
        return run("query ledger", tx -> {
            List<LedgerEvent> out = new ArrayList<>();
            try (PreparedStatement st = tx.c.prepareStatement(sql)) {
                int i = 0;
                for (Object arg : args) {
                    st.setObject(++i, arg);
                }
                if (typeArray != null) {
                    st.setArray(++i, tx.c.createArrayOf("text", typeArray));
                }
                if (query.limit() > 0) {
                    st.setLong(++i, query.limit());
                } else {
                    st.setNull(++i, Types.BIGINT);
                }
                try (ResultSet rs = tx.query(st)) {
                    while (rs.next()) {
                        out.add(readEvent(rs));
                    }
                }
            }
            Collections.reverse(out);
            return out;
        });
    }

    /** {@code postgresql://user@host:port/database}, with a password shown as {@code ***}. */
    @Override
    public String describe() {
        return description;
    }

    /** Closes the idle connections now and the others as their calls end; never throws. */
    @Override
    public void close() {
        closed = true;
        pool.close();
    }

    /**
     * What makes this store's grants less durable than a synchronous standby makes them: each {@link
     * #setup() setting} that is not safe, as a sentence for an operator that ends with what to change; empty
     * when none is. Reads the server's settings, creating nothing (no schema).
     *
     * @throws StoreUnavailableException when the server cannot be asked
     */
    public List<String> warnings() {
        return setup().unsafe().stream().map(s -> s.detail() + "; " + s.fix()).toList();
    }

    /**
     * How the server is set up for fence's role in this database, as far as a grant's durability depends on
     * it: {@code synchronous_commit} (as the server's configuration, the database or the role set it: fence's
     * own sessions raise {@code off} and {@code local} to {@code on}, see {@link #connect}) and {@code
     * synchronous_standby_names}, each judged. What {@code fence doctor} and {@code fence serve}'s start
     * report. Creates nothing (no schema).
     *
     * @throws StoreUnavailableException when the server cannot be asked
     */
    public StoreSetup.Postgres setup() {
        return run("read replication settings", true, false, System.nanoTime() + timeoutNanos, tx -> {
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("settings.durability"));
                    ResultSet rs = tx.query(st)) {
                rs.next();
                return new StoreSetup.Postgres(
                        description,
                        rs.getString("session_synchronous_commit"),
                        durability(
                                rs.getString("synchronous_commit"),
                                rs.getString("synchronous_standby_names"),
                                rs.getString("role_name"),
                                rs.getString("database_name")));
            }
        });
    }

    /**
     * Judges {@code synchronous_commit} and {@code synchronous_standby_names} as {@link #setup()} reads them,
     * for fence's role ({@code role}) in {@code database} (both quoted as SQL identifiers where they need it).
     */
    static List<StoreSetup.Setting> durability(
            String synchronousCommit, String standbyNames, String role, String database) {
        String commit =
                synchronousCommit == null ? "" : synchronousCommit.strip().toLowerCase(Locale.ROOT);
        String names = standbyNames == null ? "" : standbyNames.strip();
        boolean waits = commit.equals("on") || commit.equals("remote_apply") || commit.equals("remote_write");
        StoreSetup.Setting synchronous = waits
                ? new StoreSetup.Setting(
                        "synchronous_commit",
                        "synchronous_commit is '" + commit + "' for fence's role in this database: a grant is"
                                + " acknowledged once it is on the primary's disk and with the standbys"
                                + " synchronous_standby_names names",
                        null)
                : new StoreSetup.Setting(
                        "synchronous_commit",
                        "synchronous_commit is '" + commit + "' for fence's role in this database: PostgreSQL"
                                + " acknowledges a commit before "
                                + (commit.equals("off")
                                        ? "its own disk has it, so a crash"
                                        : "any standby has it, so a failover")
                                + " can lose acknowledged grants unnoticed; this fence's sessions set it to"
                                + " on for themselves, but every other session of the role (an older fence"
                                + " sharing the store) commits with '" + commit + "'",
                        "ALTER ROLE " + role + " IN DATABASE " + database + " SET synchronous_commit = on (or"
                                + " remote_apply; it overrides postgresql.conf, the database's and the role's"
                                + " value)");
        StoreSetup.Setting standbys = names.isEmpty()
                ? new StoreSetup.Setting(
                        "synchronous_standby_names",
                        "synchronous_standby_names is empty: no standby confirms a grant before it is"
                                + " acknowledged, so a failover can lose acknowledged grants (fence then notices"
                                + " the new timeline and starts a new generation: outstanding leases become void)",
                        "name a synchronous standby in synchronous_standby_names and let the failover manager"
                                + " promote only one (Patroni: synchronous_mode)")
                : new StoreSetup.Setting(
                        "synchronous_standby_names",
                        "synchronous_standby_names is '" + names + "': a standby it names confirms each grant"
                                + " before it is acknowledged",
                        null);
        return List.of(synchronous, standbys);
    }

    // --- identity -----------------------------------------------------------------------------------

    /** The identity a call runs under, with the offset its stored versions are read with. */
    private record Current(StoreIdentity identity, long versionBase) {}

    /**
     * What {@code identity.check} read: the stored identity (null when there is none) and whether its
     * marker matches the live server.
     */
    private record Check(
            StoreIdentity stored,
            long versionBase,
            boolean matches,
            long liveSystemIdentifier,
            long liveTimeline,
            long dbNow) {}

    private static Check readCheck(ResultSet rs) throws SQLException {
        long liveSystem = rs.getLong("live_system_identifier");
        long liveTimeline = Long.parseLong(rs.getString("live_timeline"), 16);
        long dbNow = rs.getLong("db_now");
        String generation = rs.getString("generation");
        if (generation == null) {
            return new Check(null, 0, false, liveSystem, liveTimeline, dbNow);
        }
        StoreIdentity stored = new StoreIdentity(
                generation,
                rs.getLong("floor"),
                rs.getBytes("proof_key"),
                Instant.ofEpochMilli(rs.getLong("created_at")));
        // Whether the marker matches is decided in SQL (identity.check), where the commit statement reads it.
        return new Check(stored, rs.getLong("version_base"), rs.getBoolean("matches"), liveSystem, liveTimeline, dbNow);
    }

    private static Check check(Tx tx) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("identity.check"));
                ResultSet rs = tx.query(st)) {
            if (!rs.next()) {
                throw new InternalException("identity.check returned no row");
            }
            return readCheck(rs);
        }
    }

    /** The identity to run under, after starting a new generation if the marker says the data changed. */
    private Current current(Tx tx, Supplier<StoreIdentity> candidate) throws SQLException {
        return settle(tx, check(tx), candidate);
    }

    /**
     * {@code check} if its marker matches; else a new generation, written in this transaction. Concurrent
     * callers that find the same mismatch queue on the identity row's lock, and all but the first then find
     * the marker matching again.
     *
     * @param candidate the caller's candidate, or null for one made here
     */
    private Current settle(Tx tx, Check check, Supplier<StoreIdentity> candidate) throws SQLException {
        if (!check.matches()) {
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("identity.lock"));
                    ResultSet rs = tx.query(st)) {
                // Locked, if there is a row; an absent one is claimed by the insert's conflict check.
            }
            check = check(tx);
        }
        if (!check.matches()) {
            StoreIdentity made = candidate == null
                    ? Identities.candidate(Instant.ofEpochMilli(check.dbNow()))
                    : Objects.requireNonNull(candidate.get(), "candidate");
            if (check.stored() == null) {
                try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("identity.insert"))) {
                    int i = 0;
                    st.setString(++i, made.generation());
                    st.setLong(++i, StoreIdentity.floorAt(check.dbNow()));
                    st.setBytes(++i, made.proofKey());
                    st.setLong(++i, check.dbNow());
                    st.setLong(++i, check.liveSystemIdentifier());
                    st.setLong(++i, check.liveTimeline());
                    st.setLong(++i, check.dbNow());
                    tx.update(st);
                }
            } else {
                try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("identity.replace"))) {
                    int i = 0;
                    st.setString(++i, made.generation());
                    st.setLong(++i, StoreIdentity.floorAt(check.dbNow()));
                    st.setBytes(++i, made.proofKey());
                    st.setLong(++i, check.dbNow());
                    st.setLong(++i, check.liveSystemIdentifier());
                    st.setLong(++i, check.liveTimeline());
                    tx.update(st);
                }
            }
            check = check(tx);
            if (!check.matches()) {
                throw new StoreUnavailableException("PostgreSQL store " + description
                        + " could not record a new identity (its identity row keeps changing under it); retry");
            }
        }
        Current cur = new Current(check.stored(), check.versionBase());
        tx.current = cur;
        return cur;
    }

    // --- rows ---------------------------------------------------------------------------------------

    private IdentifiedSnapshot readSnapshot(Tx tx, List<String> names, Supplier<StoreIdentity> candidate)
            throws SQLException {
        for (int attempt = 0; ; attempt++) {
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("snapshot.identified"))) {
                st.setArray(1, textArray(tx, names));
                try (ResultSet rs = tx.query(st)) {
                    if (!rs.next()) {
                        throw new InternalException("snapshot.identified returned no row");
                    }
                    Check check = readCheck(rs);
                    if (check.matches()) {
                        Current cur = new Current(check.stored(), check.versionBase());
                        tx.current = cur;
                        Map<String, ResourceState> found = new HashMap<>();
                        do {
                            String resource = rs.getString("resource");
                            if (resource != null) {
                                found.put(resource, readState(rs, resource, cur));
                            }
                        } while (rs.next());
                        Map<String, ResourceState> out = new LinkedHashMap<>();
                        for (String name : names) {
                            ResourceState s = found.get(name);
                            out.put(name, s != null ? s : missing(name, cur));
                        }
                        return new IdentifiedSnapshot(cur.identity(), Collections.unmodifiableMap(out));
                    }
                    if (tx.autocommit) {
                        throw new NeedsTransaction();
                    }
                    if (attempt > 0) {
                        throw new StoreUnavailableException("PostgreSQL store " + description
                                + " could not settle its identity (its identity row keeps changing); retry");
                    }
                    rs.close();
                    settle(tx, check, candidate);
                }
            }
        }
    }

    /** The locked row of {@code resource}, or null when it has none. */
    private static ResourceState lock(Tx tx, String resource, Current cur) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("resource.lock"))) {
            st.setString(1, resource);
            try (ResultSet rs = tx.query(st)) {
                return rs.next() ? readState(rs, resource, cur) : null;
            }
        }
    }

    private static ResourceState lockOrCreate(Tx tx, String resource, Current cur) throws SQLException {
        ResourceState s = lock(tx, resource, cur);
        if (s != null) {
            return s;
        }
        return lockOrCreateAll(tx, List.of(resource), cur).get(resource);
    }

    /** The locked rows of {@code resources}, creating the missing ones first (as empty rows). */
    private static Map<String, ResourceState> lockOrCreateAll(Tx tx, List<String> resources, Current cur)
            throws SQLException {
        Map<String, ResourceState> out = lockAll(tx, resources, cur);
        if (out.size() < resources.size()) {
            List<String> missing = new ArrayList<>();
            for (String r : resources) {
                if (!out.containsKey(r)) {
                    missing.add(r);
                }
            }
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("resources.ensure"))) {
                st.setArray(1, textArray(tx, missing));
                tx.update(st);
            }
            out.putAll(lockAll(tx, missing, cur));
            if (out.size() < resources.size()) {
                throw new InternalException("resources.ensure left rows missing for " + missing);
            }
        }
        return out;
    }

    private static Map<String, ResourceState> lockAll(Tx tx, List<String> resources, Current cur) throws SQLException {
        Map<String, ResourceState> out = new HashMap<>();
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("resources.lock"))) {
            st.setArray(1, textArray(tx, resources));
            try (ResultSet rs = tx.query(st)) {
                while (rs.next()) {
                    String resource = rs.getString("resource");
                    out.put(resource, readState(rs, resource, cur));
                }
            }
        }
        return out;
    }

    /** The state of a resource that has no row: as {@link ResourceState#empty}, at this generation's version base. */
    private static ResourceState missing(String resource, Current cur) {
        return new ResourceState(resource, cur.versionBase(), 0, 0, null, 0, null, null, null);
    }

    private static ResourceState readState(ResultSet rs, String resource, Current cur) throws SQLException {
        Lease lease = null;
        Long leaseToken = longOrNull(rs, "lease_token");
        // A lease granted under an older generation is void: its proof no longer verifies, and it must not
        // keep anyone from acquiring.
        if (leaseToken != null && cur.identity().generation().equals(rs.getString("lease_generation"))) {
            lease = new Lease(
                    rs.getString("lease_holder"),
                    leaseToken,
                    instant(rs, "lease_granted_at"),
                    instant(rs, "lease_expires_at"),
                    rs.getBoolean("lease_released"),
                    rs.getString("lease_grant_sha"));
        }
        Tip tip = null;
        Long tipToken = longOrNull(rs, "tip_token");
        if (tipToken != null) {
            tip = new Tip(
                    rs.getString("tip_sha"),
                    tipToken,
                    rs.getString("tip_holder"),
                    rs.getString("tip_pusher"),
                    instant(rs, "tip_at"));
        }
        return new ResourceState(
                resource,
                Math.addExact(rs.getLong("version"), cur.versionBase()),
                rs.getLong("latest_granted"),
                rs.getLong("highest_accepted"),
                lease,
                rs.getLong("base_token"),
                rs.getString("base_sha"),
                rs.getString("last_token_write_sha"),
                tip);
    }

    /** Writes {@code s} over its (locked, existing) row. */
    private static void writeState(Tx tx, Current cur, ResourceState s) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("resource.update"))) {
            Lease lease = s.lease();
            Tip tip = s.tip();
            int i = 0;
            st.setLong(++i, s.version() - cur.versionBase());
            st.setLong(++i, s.latestGranted());
            st.setLong(++i, s.highestAccepted());
            st.setString(++i, lease == null ? null : cur.identity().generation());
            st.setString(++i, lease == null ? null : lease.holder());
            setLong(st, ++i, lease == null ? null : lease.token());
            setLong(st, ++i, lease == null ? null : epochMillis(lease.grantedAt()));
            setLong(st, ++i, lease == null ? null : epochMillis(lease.expiresAt()));
            if (lease == null) {
                st.setNull(++i, Types.BOOLEAN);
            } else {
                st.setBoolean(++i, lease.released());
            }
            st.setString(++i, lease == null ? null : lease.grantSha());
            st.setLong(++i, s.baseToken());
            st.setString(++i, s.baseSha());
            st.setString(++i, s.lastTokenWriteSha());
            st.setString(++i, tip == null ? null : tip.sha());
            setLong(st, ++i, tip == null ? null : tip.token());
            st.setString(++i, tip == null ? null : tip.holder());
            st.setString(++i, tip == null ? null : tip.pusher());
            setLong(st, ++i, tip == null ? null : epochMillis(tip.at()));
            st.setString(++i, s.resource());
            if (tx.update(st) != 1) {
                throw new InternalException("resource.update found no row for " + s.resource());
            }
        }
    }

    /**
     * Binds the arrays of {@code fence.commit_1}'s writes from parameter {@code i + 1} on, and returns the
     * index of the last one bound. A write's lease is kept or cleared by the function; its tip is all null
     * or all set.
     */
    private static int bindWrites(Tx tx, PreparedStatement st, int i, List<ResourceWrite> writes) throws SQLException {
        int n = writes.size();
        String[] resource = new String[n];
        String[] generation = new String[n];
        Long[] expected = new Long[n];
        Long[] latest = new Long[n];
        Long[] highest = new Long[n];
        Boolean[] clearLease = new Boolean[n];
        Long[] baseToken = new Long[n];
        String[] baseSha = new String[n];
        String[] lastSha = new String[n];
        String[] tipSha = new String[n];
        Long[] tipToken = new Long[n];
        String[] tipHolder = new String[n];
        String[] tipPusher = new String[n];
        Long[] tipAt = new Long[n];
        for (int k = 0; k < n; k++) {
            ResourceWrite w = writes.get(k);
            resource[k] = w.resource();
            generation[k] = w.generation();
            expected[k] = w.expectedVersion();
            latest[k] = w.latestGranted();
            highest[k] = w.highestAccepted();
            clearLease[k] = w.clearLease();
            baseToken[k] = w.baseToken();
            baseSha[k] = w.baseSha();
            lastSha[k] = w.lastTokenWriteSha();
            Tip tip = w.tip();
            if (tip != null) {
                tipSha[k] = tip.sha();
                tipToken[k] = tip.token();
                tipHolder[k] = tip.holder();
                tipPusher[k] = tip.pusher();
                tipAt[k] = epochMillis(tip.at());
            }
        }
        st.setArray(++i, tx.c.createArrayOf("text", resource));
        st.setArray(++i, tx.c.createArrayOf("text", generation));
        st.setArray(++i, tx.c.createArrayOf("int8", expected));
        st.setArray(++i, tx.c.createArrayOf("int8", latest));
        st.setArray(++i, tx.c.createArrayOf("int8", highest));
        st.setArray(++i, tx.c.createArrayOf("bool", clearLease));
        st.setArray(++i, tx.c.createArrayOf("int8", baseToken));
        st.setArray(++i, tx.c.createArrayOf("text", baseSha));
        st.setArray(++i, tx.c.createArrayOf("text", lastSha));
        st.setArray(++i, tx.c.createArrayOf("text", tipSha));
        st.setArray(++i, tx.c.createArrayOf("int8", tipToken));
        st.setArray(++i, tx.c.createArrayOf("text", tipHolder));
        st.setArray(++i, tx.c.createArrayOf("text", tipPusher));
        st.setArray(++i, tx.c.createArrayOf("int8", tipAt));
        return i;
    }

    /** Appends {@code events} with the times they carry (times this call read from the store's clock). */
    private static void insertEvents(Tx tx, List<LedgerEvent> events) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("events.append"))) {
            bindEvents(tx, st, 0, events, true);
            try (ResultSet rs = tx.query(st)) {
                // The function's clock is not needed: the events are dated already.
            }
        }
    }

    /**
     * Binds the arrays of {@code fence.append_1}'s events from parameter {@code i + 1} on. With {@code
     * dated} false their times are left null, and the database dates them with its clock, read after the
     * transaction's locks.
     */
    private static void bindEvents(Tx tx, PreparedStatement st, int i, List<LedgerEvent> events, boolean dated)
            throws SQLException {
        int n = events.size();
        Long[] at = new Long[n];
        String[] type = new String[n];
        String[] resource = new String[n];
        String[] repo = new String[n];
        String[] ref = new String[n];
        String[] holder = new String[n];
        String[] pusher = new String[n];
        Long[] token = new Long[n];
        String[] oldSha = new String[n];
        String[] newSha = new String[n];
        String[] reason = new String[n];
        byte[][] detail = new byte[n][];
        for (int k = 0; k < n; k++) {
            LedgerEvent e = events.get(k);
            at[k] = dated ? e.at().toEpochMilli() : null;
            type[k] = e.type().label();
            resource[k] = e.resource();
            repo[k] = e.repo();
            ref[k] = e.ref();
            holder[k] = e.holder();
            pusher[k] = e.pusher();
            token[k] = e.token();
            oldSha[k] = e.oldSha();
            newSha[k] = e.newSha();
            reason[k] = e.reason();
            detail[k] = e.detail() == null ? null : e.detail().getBytes(StandardCharsets.UTF_8);
        }
        st.setArray(++i, tx.c.createArrayOf("int8", at));
        st.setArray(++i, tx.c.createArrayOf("text", type));
        st.setArray(++i, tx.c.createArrayOf("text", resource));
        st.setArray(++i, tx.c.createArrayOf("text", repo));
        st.setArray(++i, tx.c.createArrayOf("text", ref));
        st.setArray(++i, tx.c.createArrayOf("text", holder));
        st.setArray(++i, tx.c.createArrayOf("text", pusher));
        st.setArray(++i, tx.c.createArrayOf("int8", token));
        st.setArray(++i, tx.c.createArrayOf("text", oldSha));
        st.setArray(++i, tx.c.createArrayOf("text", newSha));
        st.setArray(++i, tx.c.createArrayOf("text", reason));
        st.setArray(++i, tx.c.createArrayOf("bytea", detail));
    }

    /**
     * The time retention counts back from after appending {@code events}: the database's clock {@code
     * dbNow}, or with a caller's clock ({@link StoreOptions#callerClock()}) the newest event's time.
     */
    private long newest(List<LedgerEvent> events, long dbNow) {
        if (!callerClock) {
            return dbNow;
        }
        long newest = Long.MIN_VALUE;
        for (LedgerEvent e : events) {
            newest = Math.max(newest, e.at().toEpochMilli());
        }
        return newest;
    }

    private LedgerEvent readEvent(ResultSet rs) throws SQLException {
        String type = rs.getString("type");
        EventType eventType;
        try {
            eventType = EventType.valueOf(type.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new StoreUnavailableException("PostgreSQL store " + description
                    + " holds a ledger event of unknown type '" + type + "' (seq " + rs.getLong("seq")
                    + "); was it written by a newer fence?");
        }
        byte[] detail = rs.getBytes("detail");
        return new LedgerEvent(
                rs.getLong("seq"),
                instant(rs, "at"),
                eventType,
                rs.getString("resource"),
                rs.getString("repo"),
                rs.getString("ref"),
                rs.getString("holder"),
                rs.getString("pusher"),
                rs.getLong("token"),
                rs.getString("old_sha"),
                rs.getString("new_sha"),
                rs.getString("reason"),
                detail == null ? null : new String(detail, StandardCharsets.UTF_8));
    }

    /**
     * Drops a batch of events older than the store's retention before {@code nowMillis}, the call's time
     * ({@link #nowMillis}: the database's clock, so a client whose clock is far ahead cannot erase the
     * ledger), unless a write of this instance found no backlog within the last second ({@link
     * PrunePacing}).
     */
    private void prune(Tx tx, long nowMillis, int appended) throws SQLException {
        if (!pruning.due(nowMillis)) {
            return;
        }
        long cutoff = nowMillis - retentionMillis(tx);
        if (cutoff > nowMillis) {
            return; // underflow: nothing can be that old
        }
        int batch = StoreOptions.pruneBatch(appended);
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("event.prune"))) {
            st.setLong(1, cutoff);
            st.setInt(2, batch);
            pruning.looked(nowMillis, tx.update(st), batch);
        }
    }

    /**
     * The store's retention setting, taken from the opener when the store has none yet (the first opener
     * to write one wins); a URL that asks for another value is refused.
     */
    private long retentionMillis(Tx tx) throws SQLException {
        String stored = setting(tx, RETENTION_SETTING);
        if (stored == null) {
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("setting.insert"))) {
                st.setString(1, RETENTION_SETTING);
                st.setString(2, Long.toString(askedRetentionMillis));
                tx.update(st);
            }
            stored = setting(tx, RETENTION_SETTING);
        }
        long value = Long.parseLong(stored);
        if (retentionAsked && value != askedRetentionMillis) {
            throw new ConfigException("the store URL asks for ledger retention "
                    + Durations.format(Duration.ofMillis(askedRetentionMillis)) + ", but the store's retention is "
                    + Durations.format(Duration.ofMillis(value)) + ": retention is a setting of the store, the same"
                    + " for every client; drop ?retention= from the URL, or change it for everyone with"
                    + " `fence store retention --set DURATION`");
        }
        return value;
    }

    private static final String RETENTION_SETTING = "retention_ms";

    private static String setting(Tx tx, String name) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("setting.select"))) {
            st.setString(1, name);
            try (ResultSet rs = tx.query(st)) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /**
     * {@inheritDoc} One transaction, which checks the identity's marker first as every write does; the
     * event is dated by the database's clock ({@link #nowMillis}), and the trim counts back from that same
     * reading.
     */
    @Override
    public Duration retention(Duration newRetention, String changedBy, Instant now, Supplier<StoreIdentity> candidate) {
        Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(now, "now");
        return run("retention", tx -> {
            current(tx, candidate);
            if (newRetention != null) {
                String stored = setting(tx, RETENTION_SETTING);
                long oldMillis = stored == null ? askedRetentionMillis : Long.parseLong(stored);
                long newMillis = Math.max(0, saturatedMillis(newRetention));
                try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("setting.upsert"))) {
                    st.setString(1, RETENTION_SETTING);
                    st.setString(2, Long.toString(newMillis));
                    tx.update(st);
                }
                long at = nowMillis(now, tx);
                insertEvents(
                        tx,
                        List.of(LedgerEvent.retention(
                                Instant.ofEpochMilli(at),
                                changedBy,
                                Duration.ofMillis(oldMillis),
                                Duration.ofMillis(newMillis))));
                pruning.reset();
                prune(tx, at, 1);
            }
            return Duration.ofMillis(retentionMillis(tx));
        });
    }

    /** {@inheritDoc} The database's clock: one statement, in autocommit. */
    @Override
    public Optional<Instant> now() {
        if (callerClock) {
            return Optional.empty();
        }
        return Optional.of(Instant.ofEpochMilli(
                run("read the clock", true, System.nanoTime() + timeoutNanos, tx -> nowMillis(null, tx))));
    }

    /**
     * The time a call runs at, in epoch ms: the database's clock ({@code clock_timestamp()}, read now, so
     * after any lock the call waited for), or the caller's {@code now} when a test's clock decides ({@link
     * StoreOptions#callerClock()}). Every lease time, ledger time and retention cut-off comes from here.
     *
     * @param callerNow the caller's time, or null where the SPI passes none
     */
    private long nowMillis(Instant callerNow, Tx tx) throws SQLException {
        if (callerClock && callerNow != null) {
            return callerNow.toEpochMilli();
        }
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("clock.now"));
                ResultSet rs = tx.query(st)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // --- transactions and connections ---------------------------------------------------------------

    /** What {@link #run} does inside its transaction. */
    @FunctionalInterface
    private interface Work<T> {
        T run(Tx tx) throws SQLException;
    }

    /** One attempt of one call: its connection, in a transaction, and the call's deadline. */
    private final class Tx {
        final Connection c;
        final long deadline;

        /** True for a {@link #read}: each statement commits on its own, so the work may not write. */
        final boolean autocommit;

        /** The identity the attempt ran under, once known. */
        Current current;

        Tx(Connection c, long deadline, boolean autocommit) {
            this.c = c;
            this.deadline = deadline;
            this.autocommit = autocommit;
        }

        ResultSet query(PreparedStatement st) throws SQLException {
            bound();
            return st.executeQuery();
        }

        int update(PreparedStatement st) throws SQLException {
            bound();
            return st.executeUpdate();
        }

        void batch(PreparedStatement st) throws SQLException {
            bound();
            st.executeBatch();
        }

        /**
         * Commits. A commit that comes back with a warning is not acknowledged: PostgreSQL reports a commit
         * whose wait for a synchronous standby was cancelled (by an administrator, a shutdown, a timeout) as
         * done, with a warning that the standby may not have it.
         */
        void commit(String what) throws SQLException {
            bound();
            c.clearWarnings();
            c.commit();
            SQLWarning w = c.getWarnings();
            c.clearWarnings();
            if (w != null) {
                StringBuilder text = new StringBuilder();
                for (SQLWarning x = w; x != null; x = x.getNextWarning()) {
                    text.append(text.length() == 0 ? "" : "; ").append(x.getMessage());
                }
                throw new StoreUnavailableException("PostgreSQL store " + description + " committed " + what
                        + " with a warning (" + text + "): a synchronous standby may not have it, so it is not"
                        + " acknowledged; retry");
            }
        }

        /** Makes the next reply wait at most the time left. */
        private void bound() throws SQLException {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new StoreUnavailableException("PostgreSQL store " + description
                        + " did not finish within the timeout of " + Durations.format(timeout)
                        + "; retry, or raise ?timeout= in the store URL");
            }
            c.setNetworkTimeout(DIRECT, ceilMillis(left));
        }
    }

    /**
     * Runs {@code work} in one transaction and commits it; rolls back on any failure, so no call leaves
     * part of its writes behind. Retries, while the deadline allows, a deadlock or serialization failure,
     * a pooled connection that broke before the commit was sent (once), and a schema that went missing
     * (once, after creating it again).
     */
    private <T> T run(String what, Work<T> work) {
        return run(what, false, System.nanoTime() + timeoutNanos, work);
    }

    /** As {@link #run(String, boolean, boolean, long, Work)}, for work on fence's schema (created if missing). */
    private <T> T run(String what, boolean autocommit, long deadline, Work<T> work) {
        return run(what, autocommit, true, deadline, work);
    }

    /**
     * Thrown by a read in autocommit ({@link #leadReads}) that found it must write (a new identity); carries
     * no message, as no one sees it.
     */
    private static final class NeedsTransaction extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NeedsTransaction() {
            super(null, null, false, false);
        }
    }

    /**
     * As {@link #run(String, Work)}, until {@code deadline} ({@link System#nanoTime()}); with {@code
     * autocommit}, {@code work} is a read of one statement, run without a transaction of its own (one round
     * trip instead of two), and may not write. Without {@code schema}, {@code work} reads only the server's
     * own catalogs and settings, and the schema is neither checked nor created.
     */
    private <T> T run(String what, boolean autocommit, boolean schema, long deadline, Work<T> work) {
        if (closed) {
            throw new InternalException("PostgreSQL store " + description + " used after close (" + what + ")");
        }
        int connectionAttempts = 0;
        boolean schemaRetried = false;
        while (true) {
            ConnectionPool.Borrowed borrowed;
            try {
                borrowed = pool.borrow(deadline);
            } catch (SQLException e) {
                throw unavailable(e, what);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreUnavailableException("interrupted while waiting for PostgreSQL store " + description, e);
            }
            if (borrowed == null) {
                throw new StoreUnavailableException("PostgreSQL store " + description + " is busy: all "
                        + (POOL_SIZE) + " connections of this process were in use for longer than the timeout of "
                        + Durations.format(timeout) + " (" + what + "); retry, or raise ?timeout= in the store URL");
            }
            Connection c = borrowed.connection();
            // A schema found missing by an earlier attempt is created in a transaction.
            boolean auto = autocommit && (schemaReady || !schema);
            Tx tx = new Tx(c, deadline, auto);
            boolean commitSent = false;
            try {
                if (auto) {
                    // No round trip: the pooled connection is in no transaction.
                    c.setAutoCommit(true);
                } else if (schema && !schemaReady) {
                    ensureSchema(tx);
                    schemaReady = true;
                }
                T result = work.run(tx);
                if (auto) {
                    c.setAutoCommit(false);
                } else {
                    commitSent = true;
                    tx.commit(what);
                }
                if (tx.current != null) {
                    lastIdentity = tx.current.identity();
                }
                pool.giveBack(c);
                return result;
            } catch (SQLException e) {
                boolean broken = isBroken(e, c);
                if (broken) {
                    pool.discard(c);
                } else {
                    rollbackAndGiveBack(c, deadline);
                }
                boolean timeLeft = deadline - System.nanoTime() > 0;
                if (commitSent) {
                    throw unavailable(e, what + "; the commit was sent, so it may have taken effect");
                }
                if (broken && timeLeft && ++connectionAttempts < CONNECTION_ATTEMPTS && !isTimeout(e)) {
                    // A server restart or failover breaks every idle connection at once.
                    pool.discardIdle();
                    continue;
                }
                if (isRetryable(e) && timeLeft) {
                    continue;
                }
                if (isMissingSchema(e) && !schemaRetried && timeLeft) {
                    // Dropped under a running store (data loss): created again, then a new identity.
                    schemaRetried = true;
                    schemaReady = false;
                    pool.discardIdle();
                    continue;
                }
                throw unavailable(e, what);
            } catch (RuntimeException | Error e) {
                if (commitSent) {
                    pool.discard(c);
                } else {
                    rollbackAndGiveBack(c, deadline);
                }
                throw e;
            }
        }
    }

    private void rollbackAndGiveBack(Connection c, long deadline) {
        try {
            // Back to the pool's mode first (no round trip when no transaction is open), so the rollback is
            // allowed; after a read in autocommit there is nothing to roll back.
            c.setAutoCommit(false);
            // A healthy server rolls back at once; a rollback that does not come back marks a broken link.
            long left = deadline - System.nanoTime();
            c.setNetworkTimeout(DIRECT, (int) Math.max(100, Math.min(1000, TimeUnit.NANOSECONDS.toMillis(left))));
            c.rollback();
            pool.giveBack(c);
        } catch (SQLException | RuntimeException e) {
            pool.discard(c);
        }
    }

    /**
     * Checks, in the call's transaction, that the schema is there and of a version this fence knows,
     * creating it (in a transaction of its own) when it is missing.
     */
    private void ensureSchema(Tx tx) throws SQLException {
        Integer version;
        boolean functionsMissing;
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("schema.version"));
                ResultSet rs = tx.query(st)) {
            boolean found = rs.next();
            version = found ? rs.getInt(1) : null;
            functionsMissing = found && rs.getBoolean("functions_missing");
        } catch (SQLException e) {
            if (!isMissingSchema(e)) {
                throw e;
            }
            tx.c.rollback();
            createSchema(tx);
            return;
        }
        checkVersion(version);
        if (functionsMissing) {
            tx.c.rollback();
            createSchema(tx);
        }
    }

    private void createSchema(Tx tx) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("schema.lock"));
                ResultSet rs = tx.query(st)) {
            // Held until the commit: a concurrent creator waits here, then finds the schema.
        }
        if (!queryBoolean(tx, "schema.exists")) {
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("schema.create"))) {
                tx.update(st);
            }
        } else if (hasSchemaInfo(tx)) {
            Integer version;
            try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get("schema.version"));
                    ResultSet rs = tx.query(st)) {
                version = rs.next() ? rs.getInt(1) : null;
            }
            checkVersion(version);
            createFunctions(tx);
            tx.commit("schema check");
            return;
        } else if (queryLong(tx, "schema.tables") > 0) {
            throw new StoreUnavailableException("PostgreSQL store " + description
                    + ": the schema 'fence' holds tables of another program, not a fence store; use another"
                    + " database");
        }
        for (String statement : PostgresSql.SQL.schema()) {
            try (PreparedStatement st = tx.c.prepareStatement(statement)) {
                tx.update(st);
            }
        }
        createFunctions(tx);
        tx.commit("schema creation");
    }

    /**
     * Creates (or replaces with the same text) the functions of {@code functions.sql}, under the schema
     * lock the caller holds. A store an older fence made gets them from the first newer fence to open it;
     * that needs the right to create in the schema, which its owner has.
     */
    private void createFunctions(Tx tx) throws SQLException {
        for (String statement : PostgresSql.SQL.functions()) {
            try (PreparedStatement st = tx.c.prepareStatement(statement)) {
                tx.update(st);
            } catch (SQLException e) {
                if ("42501".equals(e.getSQLState())) {
                    throw new StoreUnavailableException(
                            "PostgreSQL store " + description + " lacks the functions this fence commits"
                                    + " with (fence.commit_1, fence.append_1: an older fence made the store), and"
                                    + " fence's role may not create them (" + e.getMessage() + "); open the store"
                                    + " once as the owner of the schema 'fence' (fence doctor --store URL), or"
                                    + " GRANT CREATE ON SCHEMA fence TO <role>",
                            e);
                }
                throw e;
            }
        }
    }

    private static boolean hasSchemaInfo(Tx tx) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement("SELECT to_regclass('fence.schema_info') IS NOT NULL");
                ResultSet rs = tx.query(st)) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    private void checkVersion(Integer version) {
        if (version == null) {
            throw new StoreUnavailableException("PostgreSQL store " + description
                    + " has an empty fence.schema_info table: the schema is damaged; restore it from a backup, or"
                    + " drop the schema 'fence' to start a new store generation");
        }
        if (version > SCHEMA_VERSION) {
            throw new StoreUnavailableException("PostgreSQL store " + description + " was written by a newer fence"
                    + " (schema " + version + ", this fence knows " + SCHEMA_VERSION + "); upgrade fence");
        }
    }

    private Connection connect(long deadline) throws SQLException {
        long left = Math.max(1, deadline - System.nanoTime());
        // Whole seconds, as the driver takes them (and multiplies them into an int of milliseconds).
        String seconds =
                Long.toString(Math.max(1, Math.min(2_000_000, (TimeUnit.NANOSECONDS.toMillis(left) + 999) / 1000)));
        long timeoutMillis = Math.max(1, saturatedMillis(timeout));
        Properties p = new Properties();
        p.setProperty("user", url.user());
        if (url.password() != null) {
            p.setProperty("password", url.password());
        }
        p.setProperty("connectTimeout", seconds);
        // Covers the log-in exchange; each call then bounds its own replies (Tx.bound).
        p.setProperty("socketTimeout", seconds);
        // Only a primary takes writes; with several hosts, the one that is primary now.
        p.setProperty("targetServerType", "primary");
        // Judge each host afresh: after a promotion, the driver's memory of "a standby" is wrong.
        p.setProperty("hostRecheckSeconds", "0");
        p.setProperty("ApplicationName", "fence");
        p.setProperty("tcpKeepAlive", "true");
        // lock_timeout ends a wait for a row lock on the server, as the socket's timeout does on the client.
        // statement_timeout is 0 whatever the role's or server's default: a cancelled commit would be kept
        // locally and reported as done (see Tx.commit). A session left in a transaction by a client that
        // stopped ends after the timeout. READ COMMITTED is what the locking above is written for.
        // synchronous_commit is raised to on below, where the database or role says off or local: a grant
        // PostgreSQL acknowledged before its disk (or any standby) had it could be lost unnoticed. It is not
        // set here, where it would also lower remote_apply to on.
        long serverMillis = Math.min(timeoutMillis, Integer.MAX_VALUE - 1000L);
        p.setProperty(
                "options",
                "-c lock_timeout=" + serverMillis
                        + " -c statement_timeout=0"
                        + " -c idle_in_transaction_session_timeout=" + (serverMillis + 1000)
                        + " -c default_transaction_isolation=read\\ committed");
        Connection c = Jdbc.DRIVER.connect(url.jdbcUrl(), p);
        if (c == null) {
            throw new InternalException("the PostgreSQL driver did not accept " + url.jdbcUrl());
        }
        try {
            // In autocommit, so the SET stays for the session. One round trip per connection, not per call.
            try (PreparedStatement st = c.prepareStatement(PostgresSql.SQL.get("session.synchronous_commit"));
                    ResultSet rs = st.executeQuery()) {
                // One row when it raised the setting, none when it was safe already.
            }
            c.setAutoCommit(false);
            return c;
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    // --- errors -------------------------------------------------------------------------------------

    private static boolean isBroken(SQLException e, Connection c) {
        String state = e.getSQLState();
        if (state != null
                && (state.startsWith("08")
                        || state.equals("57P01")
                        || state.equals("57P02")
                        || state.equals("57P03"))) {
            return true;
        }
        try {
            return c.isClosed();
        } catch (SQLException x) {
            return true;
        }
    }

    private static boolean isRetryable(SQLException e) {
        return "40001".equals(e.getSQLState()) || "40P01".equals(e.getSQLState());
    }

    /** A table, the schema or one of its functions (42883: a schema an older fence made anew) is missing. */
    private static boolean isMissingSchema(SQLException e) {
        return "42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState()) || "42883".equals(e.getSQLState());
    }

    private static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    private StoreUnavailableException unavailable(SQLException e, String what) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String server = e.getMessage();
        String store = "PostgreSQL store " + description;
        String retry = "; retry, or raise ?timeout= in the store URL";
        String message;
        if (isTimeout(e)) {
            message = store + " did not answer within the timeout of " + Durations.format(timeout) + " (" + what + ")"
                    + retry;
        } else if (state.equals("55P03")) {
            message = store + " stayed locked by another writer for longer than the timeout of "
                    + Durations.format(timeout) + " (" + what + ")" + retry;
        } else if (state.startsWith("28")) {
            message = "cannot log in to " + store + " (" + server
                    + "); check the user and password (in the URL or ~/.pgpass) and pg_hba.conf";
        } else if (state.equals("3D000")) {
            message = store + " names a database that does not exist (" + server
                    + "); create it (CREATE DATABASE) or fix the URL";
        } else if (state.equals("42501")) {
            message = store + ": fence's role lacks a privilege (" + server + ", during " + what
                    + "); grant it CREATE on the database, or create the schema for it: CREATE SCHEMA fence"
                    + " AUTHORIZATION <role>";
        } else if (state.equals("25006") || state.equals("55000")) {
            message = store + " reached a server that takes no writes (" + server
                    + "): a standby, or one being promoted; point the URL at the primary, or list every member of"
                    + " the cluster";
        } else if (state.equals("53300")) {
            message = store + " refused the connection: too many connections (" + server + ")";
        } else if (state.startsWith("08")) {
            message = "cannot reach " + store + " (" + server + ")";
        } else {
            message = store + " failed during " + what + " (" + server + ")";
        }
        return new StoreUnavailableException(message, e);
    }

    // --- helpers ------------------------------------------------------------------------------------

    private static void filter(List<String> where, List<Object> args, String column, String value) {
        if (value != null) {
            where.add(column + " = ?");
            args.add(value);
        }
    }

    private static Array textArray(Tx tx, List<String> values) throws SQLException {
        return tx.c.createArrayOf("text", values.toArray(new String[0]));
    }

    private static boolean queryBoolean(Tx tx, String name) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get(name));
                ResultSet rs = tx.query(st)) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    private static long queryLong(Tx tx, String name) throws SQLException {
        try (PreparedStatement st = tx.c.prepareStatement(PostgresSql.SQL.get(name));
                ResultSet rs = tx.query(st)) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }

    private static void requirePositiveTtl(long ttlMillis) {
        if (ttlMillis <= 0) {
            throw new InternalException("lease length must be positive, got " + ttlMillis + " ms");
        }
    }

    /** Stored instants are whole milliseconds, so "at or after" a fractional one starts at the next. */
    private static long ceilMillis(Instant t) {
        long ms = t.toEpochMilli();
        return t.getNano() % 1_000_000 == 0 ? ms : ms + 1;
    }

    private static int ceilMillis(long nanos) {
        long ms = (nanos + 999_999) / 1_000_000;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, ms));
    }

    private static Long longOrNull(ResultSet rs, String column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        Long ms = longOrNull(rs, column);
        return ms == null ? null : Instant.ofEpochMilli(ms);
    }

    private static void setLong(PreparedStatement st, int i, Long value) throws SQLException {
        if (value == null) {
            st.setNull(i, Types.BIGINT);
        } else {
            st.setLong(i, value);
        }
    }

    private static Long epochMillis(Instant t) {
        return t == null ? null : t.toEpochMilli();
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    private static long saturatedMillis(Duration d) {
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
