package dev.fence.store.sqlite;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.EventType;
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
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.sqlite.SQLiteException;
import org.sqlite.SQLiteJDBCLoader;
import org.sqlite.core.DirectAccess;

/**
 * The embedded {@link LeaseStore}: one SQLite file in WAL mode, shared by every fence process on the
 * machine (or on a file system with working POSIX locks; not NFS).
 *
 * <p>Every operation is one SQLite transaction: writes run under {@code BEGIN IMMEDIATE}, so the write
 * lock is taken before anything is read and two processes can never decide on the same counter value;
 * reads run in a deferred transaction, which WAL makes a consistent snapshot that never blocks or is
 * blocked by a writer. Commits use {@code synchronous=FULL}: a granted token that a power cut could
 * roll back would be handed out again.
 *
 * <p><b>Thread-safety:</b> an instance is thread-safe. It keeps one connection and serialises its own
 * threads with a lock (SQLite serialises writers anyway, and a Java queue is fairer and quicker than
 * SQLite's sleeping busy handler); other processes are kept out by SQLite's file locks. Writes that its
 * threads make at the same time share a transaction and its commit, each in a savepoint of its own, and
 * reads made at the same time share a read transaction, as if run one after another (group commit, see
 * {@link #combined}). A read made while the lock is held, and every ledger query, runs instead on a
 * read-only connection of its own ({@link Reader}, a few kept open), so that it neither waits for the
 * commit in progress nor, when long, holds up the writes behind it. In a long-running process a thread of
 * the store's own copies SQLite's log into the file ({@link Checkpointer}), so that no commit does.
 *
 * <p><b>Bounded waits:</b> the time spent queueing behind this instance's other threads and waiting for
 * other processes' locks together stays within {@link StoreOptions#timeout()}; past it, and on a
 * missing, unwritable or damaged file, calls throw {@link StoreUnavailableException} naming the file. A
 * failed call has rolled back everything it did.
 *
 * <p><b>Data loss:</b> before each call the store checks that the file it has open is still the one at
 * its path; if the file was deleted or replaced it opens the new one (creating it), so a lost store is
 * noticed and gets a new identity on its next use instead of living on in an unlinked inode.
 *
 * <p><b>File modes:</b> the file holds the proof key, so a file the store creates is its user's alone
 * (0600, as are the {@code -wal} and {@code -shm} files SQLite makes with the database's mode), and so is
 * each directory it creates for it (0700). An existing file or directory keeps its mode: an operator may
 * share a store with a group on purpose.
 *
 * <p><b>Units:</b> instants are stored as epoch milliseconds, so every instant read back, including
 * those in results such as {@link AcquireResult.Granted#expiresAt()}, is truncated to the millisecond.
 * Leases are judged with the caller's {@code now}.
 *
 * <p><b>Ledger retention:</b> every write that appends events also deletes up to {@value
 * StoreOptions#PRUNE_MIN} events (or {@value StoreOptions#PRUNE_PER_EVENT} per event it appends, if
 * more) older than {@link StoreOptions#retention()} before the newest event it appends (for {@link
 * #acquire}, before {@code now}), so the ledger stays bounded without a separate job, a backlog drains
 * over many writes instead of stalling one, and the part a verdict pays stays small. Once a write finds
 * less than that to delete, this instance's writes skip the deletion for the next second of the store's
 * clock ({@link PrunePacing}).
 */
public final class SqliteLeaseStore implements LeaseStore {
    /** Must match the {@code PRAGMA user_version} stamped at the end of {@code schema.sql}. */
    private static final int SCHEMA_VERSION = 2;

    /** "fnce"; stamped by {@code schema.sql} so that fence never adopts another program's database. */
    private static final int APPLICATION_ID = 0x666e6365;

    /** The SQL, read on first use (after {@link Startup#begin()} has set the driver going). */
    private static final class Sql {
        static final SqlResources SQL = SqlResources.load();

        private Sql() {}
    }

    // Primary SQLite result codes (the low byte of extended ones).
    private static final int SQLITE_PERM = 3;
    private static final int SQLITE_BUSY = 5;
    private static final int SQLITE_LOCKED = 6;
    private static final int SQLITE_READONLY = 8;
    private static final int SQLITE_IOERR = 10;
    private static final int SQLITE_CORRUPT = 11;
    private static final int SQLITE_FULL = 13;
    private static final int SQLITE_CANTOPEN = 14;
    private static final int SQLITE_AUTH = 23;
    private static final int SQLITE_NOTADB = 26;

    // Set.of, not PosixFilePermissions.fromString: that builds an EnumSet, whose first use of an enum calls
    // its values() reflectively, and this class is loaded by every SQLite hook, which makes no file.

    /** The mode of a store file fence makes: the owner's alone. */
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_FILE = PosixFilePermissions.asFileAttribute(
            Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));

    /** The mode of each directory fence makes for a store file. */
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_DIRECTORY =
            PosixFilePermissions.asFileAttribute(Set.of(
                    PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE,
                    PosixFilePermission.OWNER_EXECUTE));

    private final Path file;
    private final Duration timeout;
    private final long timeoutNanos;
    /** The retention the opener asked for (its URL's, or the default); the store's setting decides. */
    private final long askedRetentionMillis;

    private final boolean retentionAsked;
    private final boolean callerClock;
    private final ReentrantLock lock = new ReentrantLock(true);

    private volatile boolean closed;

    /** Guarded by {@link #lock}; null until opened and after a failure that may have broken it. */
    private SqliteDb connection;

    /** Guarded by {@link #lock}; the opened file's inode (or platform equivalent), null if unknown. */
    private Object openedFileKey;

    /**
     * {@link #openedFileKey}, for readers, which do not take the lock: a reader serves only the file the
     * store's own connection has open. Null while it has none.
     */
    private volatile Object connectionFileKey;

    private final PrunePacing pruning = new PrunePacing();

    private SqliteLeaseStore(Path file, StoreOptions options) {
        this.file = file;
        this.timeout = options.timeout();
        this.timeoutNanos = Math.max(1, saturatedNanos(options.timeout()));
        this.askedRetentionMillis = Math.max(0, saturatedMillis(options.retention()));
        this.retentionAsked = options.retentionAsked();
        this.callerClock = options.callerClock();
        this.checkpointer = options.singleConnection() ? null : new Checkpointer();
    }

    /**
     * Opens (and if absent creates, with its parent directories and schema) the store in {@code file}; what
     * it creates is mode 0600 (directories 0700). Safe to call from many processes on the same new file at
     * once.
     *
     * @throws StoreUnavailableException when the file cannot be created, opened or written, is locked
     *     past the timeout, is damaged, or belongs to another program or a newer fence
     */
    public static SqliteLeaseStore open(Path file, StoreOptions options) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(options, "options");
        Startup.begin();
        SqliteLeaseStore store = new SqliteLeaseStore(file.toAbsolutePath().normalize(), options);
        store.run("open", false, NOTHING);
        return store;
    }

    /**
     * Loads the driver's native library on the calling thread, which a caller starts for it (see {@link
     * Stores#preload}), unless a store of this process has begun to; a store opened meanwhile waits for it.
     */
    public static void loadLibraryHere() {
        Startup.loadHere();
    }

    /**
     * Why this process's SQLite library was not loaded from fence's verified cache (an unsafe cache
     * directory, another driver version than fence's binding was written for...), for an operator; null
     * when it was, or when no store has loaded it yet. The driver's own extraction loads it instead.
     */
    public static String nativeLibraryNote() {
        return SqliteNative.note();
    }

    /**
     * sqlite-jdbc's start-up cost, begun on a thread of its own when the first store of the process opens (or
     * earlier, through {@link #loadLibraryHere}):
     * loading the native library (finding or caching it, then {@code System.load}). A one-shot hook
     * process then pays it while its other threads read the push, instead of after. (The driver's other
     * start-up cost, a date formatter built for every connection's settings, is gone: see fence's {@code
     * org.sqlite.SQLiteConnectionConfig}.)
     */
    private static final class Startup {
        /** Guarded by the class (not an AtomicBoolean, whose first use in a process links VarHandles). */
        private static boolean started;

        private static volatile Thread library;

        private Startup() {}

        static synchronized void begin() {
            if (started) {
                return;
            }
            started = true;
            Thread t = new Thread(
                    new Runnable() {
                        @Override
                        public void run() {
                            load();
                        }
                    },
                    "fence-sqlite-library");
            t.setDaemon(true);
            library = t;
            t.start();
        }

        /** As {@link #begin}, but on the calling thread. */
        static void loadHere() {
            synchronized (Startup.class) {
                if (started) {
                    return;
                }
                started = true;
                library = Thread.currentThread();
            }
            load();
        }

        private static void load() {
            try {
                SqliteNative.prepare();
                SQLiteJDBCLoader.initialize();
            } catch (Exception | LinkageError e) {
                // Opening the connection loads it again and reports the problem.
            }
        }

        /**
         * Returns once the library is loaded (or the deadline has passed): a connection opened before would
         * make the driver extract a copy of its own meanwhile.
         */
        static void awaitLibrary(long deadline) {
            Thread t = library;
            if (t != null) {
                try {
                    t.join(remainingMillis(deadline));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                library = null;
            }
        }
    }

    @Override
    public StoreIdentity identity(StoreIdentity candidate) {
        Objects.requireNonNull(candidate, "candidate");
        return identity(() -> candidate);
    }

    /** {@inheritDoc} Read first; the candidate is made only when the store has no identity. */
    @Override
    public StoreIdentity identityOf(String generation, Supplier<StoreIdentity> candidate) {
        return identity(candidate);
    }

    private StoreIdentity identity(Supplier<StoreIdentity> candidate) {
        // Read first without the write lock: the identity almost always exists, and callers such as a
        // hook verifying proofs should not queue behind writers for it.
        StoreIdentity existing = run("read identity", false, SqliteLeaseStore::readIdentity);
        if (existing != null) {
            return existing;
        }
        StoreIdentity made = Objects.requireNonNull(candidate.get(), "candidate");
        return run("create identity", true, c -> ensureIdentity(c, () -> made));
    }

    /** {@inheritDoc} The candidate is made only when the store turns out to have no identity. */
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
        return run("acquire", true, c -> {
            StoreIdentity identity = ensureIdentity(c, candidate);
            ResourceState state = readState(c, resource);
            // A lease of an older generation is void: it neither blocks a grant nor lapses into an EXPIRE event.
            Lease previous = state.lease() != null && state.lease().token() > identity.floor() ? state.lease() : null;
            if (previous != null && previous.isLive(now) && LeaseStore.blocks(previous, holder, ownToken)) {
                return new AcquireResult.Busy(resource, previous.holder(), previous.token(), previous.expiresAt());
            }
            List<LedgerEvent> events = new ArrayList<>(2);
            if (previous != null && !previous.released() && !now.isBefore(previous.expiresAt())) {
                events.add(LedgerEvent.lease(
                        previous.expiresAt(), EventType.EXPIRE, resource, previous.holder(), previous.token()));
            }
            Instant grantedAt = millis(now);
            long token = identity.nextToken(state.latestGranted(), grantedAt.toEpochMilli());
            Instant expiresAt = grantedAt.plusMillis(ttlMillis);
            Lease lease = new Lease(holder, token, grantedAt, expiresAt, false, grantSha);
            writeState(
                    c,
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
            events.add(LedgerEvent.lease(grantedAt, EventType.GRANT, resource, holder, token));
            insertEvents(c, events);
            prune(c, grantedAt.toEpochMilli(), events.size());
            return new AcquireResult.Granted(
                    resource, holder, token, identity.generation(), grantedAt, expiresAt, previous, state.tip());
        });
    }

    @Override
    public LeaseCheck renew(String resource, String holder, long token, long ttlMillis, Instant now) {
        Objects.requireNonNull(now, "now");
        requirePositiveTtl(ttlMillis);
        return run("renew", true, c -> {
            ResourceState state = readState(c, resource);
            if (!state.isCurrentGrant(holder, token)) {
                return new LeaseCheck.Refused(state.latestGranted(), state.lease());
            }
            Lease old = state.lease();
            Instant at = millis(now);
            Lease renewed = new Lease(
                    old.holder(), old.token(), old.grantedAt(), at.plusMillis(ttlMillis), false, old.grantSha());
            writeState(c, state.withLease(renewed));
            if (!at.isBefore(old.expiresAt())) {
                insertEvents(
                        c,
                        List.of(
                                LedgerEvent.lease(old.expiresAt(), EventType.EXPIRE, resource, holder, token),
                                LedgerEvent.lease(at, EventType.RENEW, resource, holder, token)));
                prune(c, at.toEpochMilli(), 2);
            }
            return new LeaseCheck.Ok(renewed);
        });
    }

    @Override
    public LeaseCheck release(String resource, String holder, long token, Instant now) {
        Objects.requireNonNull(now, "now");
        return run("release", true, c -> {
            ResourceState state = readState(c, resource);
            if (!state.isCurrentGrant(holder, token)) {
                return new LeaseCheck.Refused(state.latestGranted(), state.lease());
            }
            Lease old = state.lease();
            Instant at = millis(now);
            Lease released = new Lease(old.holder(), old.token(), old.grantedAt(), at, true, old.grantSha());
            writeState(c, state.withLease(released));
            insertEvents(c, List.of(LedgerEvent.lease(at, EventType.RELEASE, resource, holder, token)));
            prune(c, at.toEpochMilli(), 1);
            return new LeaseCheck.Ok(released);
        });
    }

    @Override
    public LeaseCheck moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
        return run("move grant sha", true, c -> {
            ResourceState state = readState(c, resource);
            if (!state.isCurrentGrant(holder, token)
                    || !Objects.equals(state.lease().grantSha(), expectedSha)) {
                return new LeaseCheck.Refused(state.latestGranted(), state.lease());
            }
            Lease old = state.lease();
            Lease moved = new Lease(old.holder(), old.token(), old.grantedAt(), old.expiresAt(), false, newSha);
            writeState(c, state.withLease(moved));
            return new LeaseCheck.Ok(moved);
        });
    }

    @Override
    public Map<String, ResourceState> snapshot(Collection<String> resources) {
        List<String> names = List.copyOf(new LinkedHashSet<>(resources));
        return run("snapshot", false, c -> {
            Map<String, ResourceState> out = new LinkedHashMap<>();
            for (String resource : names) {
                out.put(resource, readState(c, resource));
            }
            return Collections.unmodifiableMap(out);
        });
    }

    /** {@inheritDoc} One read transaction; a second, writing one only when the store has no identity yet. */
    @Override
    public IdentifiedSnapshot identityAndSnapshot(Collection<String> resources, Supplier<StoreIdentity> candidate) {
        List<String> names = List.copyOf(new LinkedHashSet<>(resources));
        IdentifiedSnapshot read = run("snapshot", false, new Work<>() {
            @Override
            public IdentifiedSnapshot run(SqliteDb c) throws SQLException {
                StoreIdentity identity = readIdentity(c);
                if (identity == null) {
                    return null;
                }
                Map<String, ResourceState> out = new LinkedHashMap<>();
                for (String resource : names) {
                    out.put(resource, readState(c, resource));
                }
                return new IdentifiedSnapshot(identity, Collections.unmodifiableMap(out));
            }
        });
        if (read != null) {
            return read;
        }
        StoreIdentity identity = identity(candidate.get());
        return new IdentifiedSnapshot(identity, snapshot(names));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Versions are checked before counters: a write computed from an older snapshot legitimately
     * carries a lower counter than the stored one, and that is a {@link CommitResult.Conflict}, not a
     * bug. Naming one resource in two writes is a bug ({@link InternalException}): which of them would
     * the version check apply to?
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
        return run("commit", true, new Work<>() {
            @Override
            public CommitResult run(SqliteDb c) throws SQLException {
                return commitIn(c, writes, events);
            }
        });
    }

    private CommitResult commitIn(SqliteDb c, List<ResourceWrite> writes, List<LedgerEvent> events)
            throws SQLException {
        if (!writes.isEmpty()) {
            // A decision made under another generation is not applied (see ResourceWrite#generation).
            StoreIdentity identity = readIdentity(c);
            for (ResourceWrite w : writes) {
                if (identity == null || !identity.generation().equals(w.generation())) {
                    return new CommitResult.Conflict(w.resource());
                }
            }
        }
        Map<String, ResourceState> current = new LinkedHashMap<>();
        for (ResourceWrite w : writes) {
            current.put(w.resource(), readState(c, w.resource()));
        }
        for (ResourceWrite w : writes) {
            if (current.get(w.resource()).version() != w.expectedVersion()) {
                return new CommitResult.Conflict(w.resource());
            }
        }
        for (ResourceWrite w : writes) {
            ResourceState s = current.get(w.resource());
            if (w.latestGranted() < s.latestGranted() || w.highestAccepted() < s.highestAccepted()) {
                throw new InternalException("a commit would lower the tokens of " + w.resource()
                        + " (counter " + s.latestGranted() + " -> " + w.latestGranted()
                        + ", highest accepted " + s.highestAccepted() + " -> " + w.highestAccepted()
                        + "); nothing was written");
            }
        }
        for (ResourceWrite w : writes) {
            ResourceState s = current.get(w.resource());
            writeState(
                    c,
                    new ResourceState(
                            w.resource(),
                            s.version() + 1,
                            w.latestGranted(),
                            w.highestAccepted(),
                            w.clearLease() ? null : s.lease(),
                            w.baseToken(),
                            w.baseSha(),
                            w.lastTokenWriteSha(),
                            w.tip()));
        }
        insertEvents(c, events);
        pruneBefore(c, events);
        return new CommitResult.Committed();
    }

    @Override
    public void append(List<LedgerEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        run("append", true, new Work<Void>() {
            @Override
            public Void run(SqliteDb c) throws SQLException {
                insertEvents(c, events);
                pruneBefore(c, events);
                return null;
            }
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>"Oldest" is append order ({@link LedgerEvent#seq()}), not {@link LedgerEvent#at()}: events carry
     * the clocks of different processes, and an {@link EventType#EXPIRE} is dated at the lapse it
     * records, which may be before events appended earlier.
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
        if (query.types() != null && !query.types().isEmpty()) {
            where.add("type IN ("
                    + String.join(", ", Collections.nCopies(query.types().size(), "?")) + ")");
            query.types().stream().map(EventType::label).sorted().forEach(args::add);
        }
        // SQLite reads a negative LIMIT as "no limit".
        args.add(query.limit() > 0 ? query.limit() : -1);
        String sql = Sql.SQL.get("event.select")
                + (where.isEmpty() ? "" : "\n WHERE " + String.join(" AND ", where))
                + "\n"
                + Sql.SQL.get("event.select.order");
        return runLong("query ledger", c -> {
            List<LedgerEvent> out = new ArrayList<>();
            try (SqliteDb.Statement st = c.prepare(sql)) {
                for (int i = 0; i < args.size(); i++) {
                    st.value(i + 1, args.get(i));
                }
                while (st.next()) {
                    out.add(readEvent(st));
                }
            }
            Collections.reverse(out);
            return out;
        });
    }

    /** {@code "sqlite:"} followed by the absolute path of the file. */
    @Override
    public String describe() {
        return "sqlite:" + file;
    }

    /** Closes the connection, waiting up to the timeout for a call in progress; never throws. */
    @Override
    public void close() {
        closed = true;
        boolean locked = false;
        try {
            locked = lock.tryLock(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            locked = lock.tryLock();
        }
        closeReaders();
        if (checkpointer != null) {
            checkpointer.stop();
        }
        if (locked) {
            try {
                dropConnection();
            } finally {
                lock.unlock();
            }
        }
        // Else a transaction still runs on the connection: freeing its statements under it would crash the
        // JVM, so the thread running it closes the connection when it ends (lead).
    }

    // --- transactions and connection --------------------------------------------------------------

    /**
     * What {@link #run} does inside its transaction. The calls a hook makes (open, identity and snapshot,
     * commit, and a refused push's append) pass classes: a JDK 17 hook links no lambda ({@code
     * LauncherArchiveIT}).
     */
    @FunctionalInterface
    private interface Work<T> {
        T run(SqliteDb c) throws SQLException;
    }

    private static final Work<Void> NOTHING = new Work<>() {
        @Override
        public Void run(SqliteDb c) {
            return null;
        }
    };

    /**
     * Runs {@code work} in a transaction ({@code BEGIN IMMEDIATE} when {@code write}) and commits it; rolls
     * back on any failure, so no call leaves part of its writes behind. Calls of this instance's threads
     * that queue up while a transaction runs share the next one ({@link #combined}).
     */
    private <T> T run(String what, boolean write, Work<T> work) {
        if (closed) {
            throw usedAfterClose(what);
        }
        long deadline = System.nanoTime() + timeoutNanos;
        if (!write && lock.isLocked()) {
            Reader.Outcome<T> read = readAside(what, work, deadline, false);
            if (read != null) {
                return read.value();
            }
        }
        return combined(new Job<>(what, write, work, deadline));
    }

    /**
     * Runs a read that may take long (a ledger query) on a read-only connection of its own, so that it never
     * holds this instance's lock, and the verdicts and grants queued behind it, for its whole length; on
     * the store's own connection ({@link #run}) only if no reader can be opened.
     */
    private <T> T runLong(String what, Work<T> work) {
        if (closed) {
            throw usedAfterClose(what);
        }
        long deadline = System.nanoTime() + timeoutNanos;
        boolean permitted = false;
        try {
            permitted = longReads.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting for SQLite store " + file);
        }
        if (!permitted) {
            throw new StoreUnavailableException("SQLite store " + file + " is busy: " + MOST_LONG_READS
                    + " other ledger queries of this process ran for longer than the timeout of "
                    + Durations.format(timeout) + " (" + what + "); narrow the query, or retry");
        }
        try {
            Reader.Outcome<T> read = readAside(what, work, deadline, true);
            return read != null ? read.value() : combined(new Job<>(what, false, work, deadline));
        } finally {
            longReads.release();
        }
    }

    /**
     * {@code work} on a reader ({@link #reader}); null when none could be had, and the read is then the
     * queued path's.
     *
     * @throws RuntimeException what the read failed with on the reader, as the queued path would say it
     */
    private <T> Reader.Outcome<T> readAside(String what, Work<T> work, long deadline, boolean beyondPool) {
        Reader reader = reader(deadline, beyondPool);
        if (reader == null) {
            return null;
        }
        if (closed) {
            // Closed while it was taken: the queued path says "used after close".
            discard(reader);
            return null;
        }
        return reader.read(what, work, deadline);
    }

    // --- readers ------------------------------------------------------------------------------------

    /**
     * The most read-only connections an instance opens besides its own: enough that a busy server's reads
     * overlap its commits on two cores, few enough that their page caches stay small.
     */
    private static final int MOST_READERS = 4;

    /**
     * Idle read-only connections, the most recently used first (its page cache is the warmest). Not a
     * ConcurrentLinkedDeque: see {@link #pending}.
     */
    private final LinkedBlockingDeque<Reader> idleReaders = new LinkedBlockingDeque<>();

    /** Read-only connections open, idle or in use. */
    private final AtomicInteger readers = new AtomicInteger();

    /**
     * The most ledger queries that read at once: each may scan the whole ledger on a connection of its own,
     * and an overlapping run of long reads keeps SQLite from restarting its log; the lock held them to one.
     */
    private static final int MOST_LONG_READS = 2;

    private final Semaphore longReads = new Semaphore(MOST_LONG_READS);

    /**
     * An idle read-only connection, or a new one while fewer than {@link #MOST_READERS} are open (or past
     * that, when {@code beyondPool}: closed after its read); null when none can be had at once, and the read
     * then queues for the lock.
     */
    private Reader reader(long deadline, boolean beyondPool) {
        Reader r;
        while ((r = idleReaders.pollFirst()) != null) {
            if (!r.fileReplaced()) {
                return r;
            }
            discard(r);
        }
        if (beyondPool) {
            readers.incrementAndGet();
        } else {
            int open = readers.get();
            if (open >= MOST_READERS || !readers.compareAndSet(open, open + 1)) {
                return null;
            }
        }
        Reader opened = null;
        try {
            opened = openReader(deadline);
            return opened;
        } catch (SQLException | RuntimeException | LinkageError e) {
            // The queued path opens the file itself and reports what is wrong with it (a driver mismatch too).
            return null;
        } finally {
            if (opened == null) {
                readers.decrementAndGet();
            }
        }
    }

    /**
     * A reader of the file the store's own connection has open ({@link #openBeside}), or null: only a file
     * that connection has already made a fence store of, in WAL mode. A reader opens read-only: it creates,
     * converts and repairs nothing.
     */
    private Reader openReader(long deadline) throws SQLException {
        Object key = connectionFileKey;
        Startup.awaitLibrary(deadline);
        SqliteDb c = openBeside(key, SqliteDb.Mode.READ_ONLY, remainingMillis(deadline), db -> {
            if (!"wal".equalsIgnoreCase(db.queryText("PRAGMA journal_mode"))
                    || pragmaInt(db, "PRAGMA user_version") != SCHEMA_VERSION
                    || pragmaInt(db, "PRAGMA application_id") != APPLICATION_ID) {
                return false;
            }
            // Belt and braces: a bug that wrote through a reader would bypass the write lock and group commit.
            db.exec("PRAGMA query_only = 1");
            return true;
        });
        return c == null ? null : new Reader(c, key);
    }

    /**
     * A connection of its own on the file the store's own connection has open (whose key is {@code key}),
     * for a reader or the checkpointer; null when the path does not lead to that file, or {@code prepare}
     * (which reads) turns it down. Its first read opens the log and its index by path: had the file been
     * replaced since it was opened, they could be the new file's beside the old file's descriptor, so the
     * path must still lead to {@code key}'s file after that read, and the store's connection still have
     * it. (Closing a connection turned down here is safe: SQLite neither checkpoints nor deletes the log of
     * a file that has moved, {@code SQLITE_FCNTL_HAS_MOVED}.)
     */
    private SqliteDb openBeside(Object key, SqliteDb.Mode mode, int busyTimeoutMillis, Work<Boolean> prepare)
            throws SQLException {
        if (key == null || !key.equals(fileKey())) {
            return null;
        }
        SqliteDb c = SqliteDb.open(file, mode, busyTimeoutMillis);
        boolean kept = false;
        try {
            kept = prepare.run(c) && key.equals(fileKey()) && key.equals(connectionFileKey);
            return kept ? c : null;
        } finally {
            if (!kept) {
                closeQuietly(c);
            }
        }
    }

    /** Puts an idle reader back, or closes it if more are open than the pool keeps or the store closed. */
    private void release(Reader r) {
        if (readers.get() > MOST_READERS) {
            discard(r);
            return;
        }
        idleReaders.offerFirst(r);
        if (closed) {
            closeReaders();
        }
    }

    private void discard(Reader r) {
        readers.decrementAndGet();
        closeQuietly(r.db);
    }

    private void closeReaders() {
        for (Reader r; (r = idleReaders.pollFirst()) != null; ) {
            discard(r);
        }
    }

    /**
     * A read-only connection of its own for one read at a time, on the caller's thread. WAL gives each read
     * transaction the snapshot of the last commit before it began, so a read here sees every write whose
     * caller has been answered, as on the store's own connection, and it neither waits for this instance's
     * lock nor holds it: reads overlap the group commit's writing and syncing, and an auditor's long query
     * does not hold up verdicts.
     */
    private final class Reader {
        final SqliteDb db;
        final Object fileKey;

        Reader(SqliteDb db, Object fileKey) {
            this.db = db;
            this.fileKey = fileKey;
        }

        /** True when its file is no longer at the path, or no longer the one the store's own connection has. */
        boolean fileReplaced() {
            Object key = fileKey();
            return key == null || !key.equals(fileKey) || !fileKey.equals(connectionFileKey);
        }

        /** A read's value; a record so that a read whose value is null is told from one that did not run. */
        record Outcome<T>(T value) {}

        /**
         * Runs {@code work} in a read transaction and puts the reader back. If the transaction cannot begin,
         * the reader is closed and null returned: nothing ran, and the read is queued on the store's own
         * connection, whose handling of busy, damaged or replaced files is the one the store answers with.
         * A failure of the read itself closes the reader too, and is the caller's, said as the queued path
         * says it: run again under the lock, a long read that fails would hold up every write behind it.
         */
        <T> Outcome<T> read(String what, Work<T> work, long deadline) {
            try {
                db.busyTimeout(remainingMillis(deadline));
                db.run("BEGIN");
            } catch (SQLException | RuntimeException e) {
                discard(this);
                return null;
            }
            T value;
            try {
                value = work.run(db);
                db.run("COMMIT");
            } catch (Throwable e) {
                try {
                    db.run("ROLLBACK");
                } catch (SQLException | RuntimeException ignored) {
                    // The reader is closed below either way.
                }
                discard(this);
                throw failure(e, what);
            }
            // Not in the try above: once back in the pool, another thread may be using it.
            release(this);
            return new Outcome<>(value);
        }
    }

    // --- checkpoints ---------------------------------------------------------------------------------

    /**
     * Copies the log into the file off the write path, for the store of a long-running process ({@link
     * StoreOptions#singleConnection()} off); null for a one-shot process's, which keeps SQLite's own.
     */
    private final Checkpointer checkpointer;

    /**
     * SQLite checkpoints inside the commit that takes its log past a thousand pages: under this instance's
     * lock, with every call queued behind it, it copies those pages into the file and syncs it. While a big
     * ledger was trimmed (each trimming write dirties pages of five indexes), that put 10 to 30 ms into about
     * one verdict in a hundred. Here a thread of its own checkpoints on a connection of its own (SQLite's
     * {@code PASSIVE} mode, which neither takes nor waits for the write lock) at most every {@link
     * #INTERVAL_NANOS} while writes come, and once after they stop; the store's connection checkpoints only
     * past {@link #SAFETY_NET_PAGES}, should this fall behind. The thread starts with the first write and
     * ends with the store. A failed checkpoint is tried again at the next write: nothing depends on it but
     * the log's length.
     */
    private final class Checkpointer implements Runnable {
        /** The most often the log is copied while writes keep coming. */
        static final long INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

        static final int SAFETY_NET_PAGES = 10_000;

        private volatile boolean due;
        private volatile boolean stopped;
        private Thread thread;

        /** Guarded by being used by the thread only. */
        private SqliteDb db;

        private Object dbKey;

        /**
         * A write transaction committed: a checkpoint is due. Cheap (a wake-up at most once per round), and
         * never throws: the commit it follows has been made and its callers must hear so.
         */
        void written() {
            if (due) {
                return;
            }
            due = true;
            try {
                Thread t = started();
                if (t != null) {
                    LockSupport.unpark(t);
                }
            } catch (Throwable e) {
                // No thread (out of memory, say): SQLite's own checkpoint past SAFETY_NET_PAGES still bounds the
                // log, and the next write tries again.
                due = false;
            }
        }

        /** The thread, started (again, should it have died) unless the store is stopping. */
        private synchronized Thread started() {
            if ((thread == null || !thread.isAlive()) && !stopped) {
                Thread t = new Thread(this, "fence-sqlite-checkpoint " + file);
                t.setDaemon(true);
                t.start();
                thread = t;
            }
            return thread;
        }

        /**
         * Stops the thread and waits (up to the store timeout) until it has closed its connection: the
         * store's own must be the file's last, which SQLite checkpoints into the file and then deletes the
         * log. Left open, the log would hold writes that a copy of the file alone (a backup) would miss.
         */
        void stop() {
            Thread t;
            synchronized (this) {
                stopped = true;
                t = thread;
            }
            if (t == null || t == Thread.currentThread()) {
                return;
            }
            LockSupport.unpark(t);
            try {
                t.join(Math.max(1, timeout.toMillis()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void run() {
            try {
                while (!stopped && !closed) {
                    if (!due) {
                        LockSupport.park(this);
                        continue;
                    }
                    // Lets a round's writes gather into one checkpoint.
                    LockSupport.parkNanos(this, INTERVAL_NANOS);
                    due = false;
                    if (!stopped && !closed) {
                        try {
                            checkpoint();
                        } catch (Throwable e) {
                            // Out of memory, say: tried again on a new connection after the next write.
                            drop();
                        }
                    }
                }
            } finally {
                drop();
            }
        }

        private void checkpoint() {
            try {
                Object key = connectionFileKey;
                if (db != null && (key == null || !key.equals(dbKey) || !key.equals(fileKey()))) {
                    drop();
                }
                if (db == null) {
                    // The file the store's own connection has open, never a new one.
                    db = openBeside(key, SqliteDb.Mode.EXISTING, 0, c -> {
                        c.queryText("SELECT count(*) FROM sqlite_schema");
                        return true;
                    });
                    if (db == null) {
                        return;
                    }
                    dbKey = key;
                }
                db.exec("PRAGMA wal_checkpoint(PASSIVE)");
            } catch (SQLException | RuntimeException | LinkageError e) {
                // Tried again after the next write, on a new connection.
                drop();
            }
        }

        private void drop() {
            if (db != null) {
                closeQuietly(db);
                db = null;
                dbKey = null;
            }
        }
    }

    private InternalException usedAfterClose(String what) {
        return new InternalException("SQLite store " + file + " used after close (" + what + ")");
    }

    private StoreUnavailableException busy(String what) {
        return new StoreUnavailableException("SQLite store " + file + " is busy: other threads of this process"
                + " held it for longer than the timeout of " + Durations.format(timeout) + " (" + what
                + "); retry, or raise ?timeout= in the store URL");
    }

    /**
     * Calls waiting for a transaction, oldest first. A deque under a lock of its own rather than the
     * lock-free ConcurrentLinkedDeque, whose class initialiser sets up VarHandles: about 3 ms of a JDK 17 hook
     * process (bench: "Java hook, SQLite" rows), while the deque's few operations per call are short.
     */
    private final LinkedBlockingDeque<Job<?>> pending = new LinkedBlockingDeque<>();

    /**
     * The most calls one turn of the lock takes: enough to share a commit among a busy server's verdicts,
     * few enough that the lock is not held for long.
     */
    private static final int MOST_PER_TRANSACTION = 64;

    /** The longest a waiting call sleeps before looking again, should a wake-up have gone astray. */
    private static final long MOST_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /**
     * Group commit. SQLite runs one write transaction at a time, and its commit (a write and an fsync of
     * the log) costs more than a verdict's statements; so a call queues itself, and whichever waiting
     * thread gets the lock takes the queued calls (up to {@link #MOST_PER_TRANSACTION}) and runs their
     * reads in one read transaction, then their writes in one {@code BEGIN IMMEDIATE} transaction, each
     * write in a savepoint of its own, commits once and hands each caller its outcome, as if the calls had
     * run one after another. Reads never share a transaction with writes, and a caller whose own call
     * reads leads only reads ({@link #lead}), so that a read never waits for another process's writer
     * (WAL). A call whose work fails (an exception, a failing statement of its own) is rolled back alone;
     * a failure of the transaction itself fails every call in it, and none of them is kept. No result is
     * handed out before the commit that made it durable.
     *
     * <p>A caller waits at most until its own deadline: while another process holds SQLite's write lock,
     * a transaction waits for it only until the earliest deadline among its calls, and the calls whose
     * deadlines have not passed go back to the head of the queue to wait on. Once a transaction has begun
     * with a call, its caller waits for that transaction.
     */
    private <T> T combined(Job<T> job) {
        pending.addLast(job);
        boolean interrupted = false;
        try {
            while (true) {
                if (lock.tryLock()) {
                    try {
                        lead(job);
                    } finally {
                        lock.unlock();
                        wakeNext();
                    }
                }
                if (job.isDone()) {
                    return job.outcome();
                }
                interrupted |= Thread.interrupted();
                if (interrupted && job.cancel()) {
                    pending.remove(job);
                    throw new StoreUnavailableException("interrupted while waiting for SQLite store " + file);
                }
                long left = job.deadline() - System.nanoTime();
                if (left <= 0 && job.cancel()) {
                    pending.remove(job);
                    // Put back for another process's write lock: say so, not that this process was busy.
                    throw job.lockedOut != null ? unavailable(job.lockedOut, job.what) : busy(job.what);
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
     * Under {@link #lock}: runs queued calls, reads first, and wakes their callers. A caller whose own call
     * reads takes only reads, so that it never waits in a write transaction for another process's writer
     * (the writes stay queued for a writer's caller, whom {@link #wakeNext} wakes). Never throws: whatever
     * fails becomes the outcome of the calls it concerns.
     */
    private void lead(Job<?> own) {
        List<Job<?>> reads = new ArrayList<>();
        List<Job<?>> writes = new ArrayList<>();
        if (own.write) {
            for (Job<?> j; reads.size() + writes.size() < MOST_PER_TRANSACTION && (j = pending.pollFirst()) != null; ) {
                if (j.take()) {
                    (j.write ? writes : reads).add(j);
                }
            }
        } else {
            for (Iterator<Job<?>> it = pending.iterator(); it.hasNext() && reads.size() < MOST_PER_TRANSACTION; ) {
                Job<?> j = it.next();
                if (!j.write) {
                    it.remove();
                    if (j.take()) {
                        reads.add(j);
                    }
                }
            }
        }
        try {
            settle(reads, false);
        } finally {
            // Taken jobs must be settled whatever happened to the others: their callers wait for them.
            try {
                settle(writes, true);
            } finally {
                if (closed) {
                    // close() could not take the lock while a transaction ran; the connection is closed here.
                    dropConnection();
                }
            }
        }
    }

    /** Runs {@code jobs} in one transaction, then finishes them or puts them back at the head of the queue. */
    private void settle(List<Job<?>> jobs, boolean write) {
        if (jobs.isEmpty()) {
            return;
        }
        List<Job<?>> again = List.of();
        try {
            if (closed) {
                for (Job<?> j : jobs) {
                    j.fail(usedAfterClose(j.what));
                }
            } else {
                again = transaction(jobs, write);
            }
        } finally {
            for (int i = again.size() - 1; i >= 0; i--) {
                again.get(i).putBack();
                pending.addFirst(again.get(i));
            }
            for (Job<?> j : jobs) {
                if (!again.contains(j)) {
                    j.finish(file);
                }
            }
        }
    }

    /** Wakes the caller of the oldest call still waiting for a transaction, to take the lock and run it. */
    private void wakeNext() {
        for (Job<?> j : pending) {
            if (j.isQueued()) {
                j.wake();
                return;
            }
        }
    }

    /**
     * Under {@link #lock}: runs the jobs' work in one transaction ({@code BEGIN IMMEDIATE} when {@code
     * write}), each write in a savepoint of its own when there are several, commits it, and settles every
     * job, except those to try again.
     *
     * @return the jobs whose deadlines had not passed when another process's write lock outlasted the
     *     transaction's wait (nothing of theirs ran), to wait on
     */
    private List<Job<?>> transaction(List<Job<?>> jobs, boolean write) {
        long deadline = Long.MAX_VALUE;
        for (Job<?> j : jobs) {
            deadline = Math.min(deadline, j.deadline());
        }
        boolean alone = jobs.size() == 1;
        boolean begun = false;
        boolean suspect = false;
        try {
            SqliteDb c = connection(deadline);
            c.busyTimeout(remainingMillis(deadline));
            c.run(write ? "BEGIN IMMEDIATE" : "BEGIN");
            begun = true;
            boolean committed = false;
            try {
                for (Job<?> j : jobs) {
                    if (alone) {
                        // Its failure ends the transaction, which is rolled back below.
                        j.runIn(c);
                    } else {
                        suspect |= runOne(c, j, write);
                    }
                }
                c.run("COMMIT");
                committed = true;
                if (write && checkpointer != null) {
                    checkpointer.written();
                }
            } finally {
                if (!committed) {
                    rollback(c);
                    for (Job<?> j : jobs) {
                        j.revoke();
                    }
                }
            }
            if (suspect) {
                // A statement failed as a broken connection or file would make it; the next call opens anew.
                dropConnection();
            }
        } catch (SQLException e) {
            if (!begun && isBusy(e)) {
                List<Job<?>> again = new ArrayList<>();
                long now = System.nanoTime();
                for (Job<?> j : jobs) {
                    if (j.deadline() - now > 0) {
                        j.lockedOut = e;
                        again.add(j);
                    } else {
                        j.fail(unavailable(e, j.what));
                    }
                }
                return again;
            }
            if (!isBusy(e)) {
                // The connection may be broken (I/O error, file replaced); the next call opens a new one.
                dropConnection();
            }
            for (Job<?> j : jobs) {
                j.failUnlessFailed(unavailable(e, j.what));
            }
        } catch (Throwable e) {
            // A lone job's own failure, or one before or after any work ran (opening the file).
            for (Job<?> j : jobs) {
                j.failUnlessFailed(failure(e, j.what));
            }
        }
        return List.of();
    }

    /**
     * Runs one of several jobs, a write in a savepoint; a failure of its work (its own statements
     * included) is rolled back to the savepoint and becomes its outcome, and the transaction goes on.
     *
     * @return true when its statement failed as a broken connection would (the connection is then not reused)
     * @throws SQLException when the savepoint itself fails: the transaction cannot go on
     */
    private boolean runOne(SqliteDb c, Job<?> j, boolean write) throws SQLException {
        if (write) {
            c.run("SAVEPOINT job");
        }
        boolean suspect = false;
        try {
            j.runIn(c);
        } catch (Throwable e) {
            if (write) {
                c.run("ROLLBACK TO job");
            }
            suspect = e instanceof SQLException se && !isBusy(se);
            j.fail(failure(e, j.what));
        }
        if (write) {
            c.run("RELEASE job");
        }
        return suspect;
    }

    /** What a caller is told of a failure of its call. */
    private RuntimeException failure(Throwable e, String what) {
        if (e instanceof SQLException se) {
            return unavailable(se, what);
        }
        if (e instanceof IncompatibleClassChangeError || e instanceof UnsatisfiedLinkError) {
            // Another driver version than fence's binding was written for: say so instead of a stack trace.
            return new InternalException(DirectAccess.mismatch((LinkageError) e), e);
        }
        if (e instanceof RuntimeException re) {
            return re;
        }
        return new InternalException(
                "SQLite store " + file + " failed in a transaction (" + what + "): " + e + "; nothing of it was kept",
                e);
    }

    /**
     * One call's work and, once settled, its outcome. The outcome is written under the store's lock before
     * the job is marked done, and read by its caller after it sees it done (a volatile handoff).
     */
    private static final class Job<T> extends QueuedCall {
        final String what;
        final boolean write;
        final Work<T> work;
        private boolean settled;
        private T result;
        private RuntimeException failure;

        /** Why the job was last put back: another process's write lock outlasted a transaction's wait. */
        volatile SQLException lockedOut;

        Job(String what, boolean write, Work<T> work, long deadline) {
            super(deadline);
            this.what = what;
            this.write = write;
            this.work = work;
        }

        void runIn(SqliteDb c) throws SQLException {
            result = work.run(c);
            settled = true;
        }

        /** Its transaction was rolled back: a result it had is no longer true. */
        void revoke() {
            if (failure == null) {
                result = null;
                settled = false;
            }
        }

        void fail(RuntimeException e) {
            result = null;
            failure = e;
            settled = true;
        }

        /** As {@link #fail}, but a failure of its own stands (it says more than the transaction's). */
        void failUnlessFailed(RuntimeException e) {
            if (failure == null) {
                fail(e);
            }
        }

        /** Back to waiting for a transaction: nothing of it ran. */
        void putBack() {
            result = null;
            failure = null;
            settled = false;
            requeue();
        }

        /** Marks the job done (failed, if nothing settled it) and wakes its caller. */
        void finish(Path file) {
            if (!settled) {
                fail(new InternalException("a shared transaction of SQLite store " + file + " ended abruptly (" + what
                        + "); nothing of it was committed"));
            }
            done();
        }

        T outcome() {
            if (failure != null) {
                throw failure;
            }
            return result;
        }
    }

    private SqliteDb connection(long deadline) throws SQLException {
        if (connection != null && !fileReplaced()) {
            return connection;
        }
        dropConnection();
        connection = openConnection(deadline);
        return connection;
    }

    /** True when the path no longer leads to the file this store opened (deleted, or replaced). */
    private boolean fileReplaced() {
        try {
            Object key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
            return key != null && openedFileKey != null && !key.equals(openedFileKey);
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            // Not decidable from here; SQLite reports the real problem when the call goes ahead.
            return false;
        }
    }

    private SqliteDb openConnection(long deadline) throws SQLException {
        Path parent = file.getParent();
        boolean posix = file.getFileSystem().supportedFileAttributeViews().contains("posix");
        try {
            // A stat first: creating a directory that is there fails with an exception, built on every open.
            if (parent != null && !Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS)) {
                if (posix) {
                    Files.createDirectories(parent, PRIVATE_DIRECTORY);
                } else {
                    Files.createDirectories(parent);
                }
            }
        } catch (IOException e) {
            throw new StoreUnavailableException(
                    "cannot create the directory of SQLite store " + file + ": " + describe(e), e);
        }
        if (posix && !Files.exists(file)) {
            createPrivately();
        }
        Startup.awaitLibrary(deadline);
        SqliteDb c = SqliteDb.open(file, SqliteDb.Mode.CREATE, remainingMillis(deadline));
        try {
            String mode = c.queryText("PRAGMA journal_mode = WAL");
            if (!"wal".equalsIgnoreCase(mode)) {
                throw new StoreUnavailableException("SQLite store " + file
                        + " could not be switched to WAL mode (journal mode is " + mode
                        + "); fence needs a local file system that supports shared memory and locks");
            }
            c.exec("PRAGMA synchronous = FULL");
            if (checkpointer != null) {
                // Only a net, should the checkpointer fall behind: it keeps the log far below this.
                c.exec("PRAGMA wal_autocheckpoint = " + Checkpointer.SAFETY_NET_PAGES);
            }
            initialiseSchema(c);
            openedFileKey = fileKey();
            connectionFileKey = openedFileKey;
            return c;
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    /**
     * Makes the store's file, empty and mode 0600, for SQLite to open: left to SQLite, it would be made as
     * the umask allows (0644 under the usual 022), readable by every user on the host, and it holds the
     * proof key, with which anyone can make any holder's proof. SQLite gives the {@code -wal} and {@code
     * -shm} files it makes beside a database that database's mode, so they are owner-only too. A file that
     * is there (made by another process meanwhile, or by an operator who shares the store with a group on
     * purpose) is left as it is: its mode is never changed.
     */
    private void createPrivately() {
        try {
            Files.createFile(file, PRIVATE_FILE);
        } catch (FileAlreadyExistsException e) {
            // Made meanwhile, or a link: opened as it is.
        } catch (IOException e) {
            throw new StoreUnavailableException(
                    "cannot create SQLite store " + file + " (" + describe(e)
                            + "); check that its directory is writable by this user",
                    e);
        }
    }

    /** Creates the schema in a new file, or checks that an existing file is a fence store it can use. */
    private void initialiseSchema(SqliteDb c) throws SQLException {
        if (pragmaInt(c, "PRAGMA user_version") == SCHEMA_VERSION) {
            checkApplicationId(c);
            return;
        }
        c.exec("BEGIN IMMEDIATE");
        boolean committed = false;
        try {
            int version = pragmaInt(c, "PRAGMA user_version");
            if (version == 0) {
                int applicationId = pragmaInt(c, "PRAGMA application_id");
                if (applicationId != 0 || countTables(c) > 0) {
                    throw new StoreUnavailableException("SQLite store " + file
                            + " is a database of another program, not a fence store; point fence at a new file");
                }
                for (String statement : Sql.SQL.schema()) {
                    c.exec(statement);
                }
            } else if (version == 1) {
                c.exec(Sql.SQL.get("schema.upgrade.2"));
                c.exec("PRAGMA user_version = " + SCHEMA_VERSION);
            } else if (version > SCHEMA_VERSION) {
                throw new StoreUnavailableException("SQLite store " + file + " was written by a newer fence (schema "
                        + version + ", this fence knows " + SCHEMA_VERSION + "); upgrade fence");
            }
            checkApplicationId(c);
            c.exec("COMMIT");
            committed = true;
        } finally {
            if (!committed) {
                rollback(c);
            }
        }
    }

    private void checkApplicationId(SqliteDb c) throws SQLException {
        int applicationId = pragmaInt(c, "PRAGMA application_id");
        if (applicationId != APPLICATION_ID) {
            throw new StoreUnavailableException("SQLite store " + file
                    + " is a database of another program, not a fence store; point fence at a new file");
        }
    }

    private Object fileKey() {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    private void rollback(SqliteDb c) {
        try {
            c.run("ROLLBACK");
        } catch (SQLException e) {
            // SQLite may already have rolled back (I/O errors do); a connection in an unknown state is
            // not reused.
            dropConnection();
        }
    }

    private void dropConnection() {
        SqliteDb c = connection;
        connection = null;
        openedFileKey = null;
        connectionFileKey = null;
        if (c != null) {
            closeQuietly(c);
        }
    }

    private static void closeQuietly(SqliteDb c) {
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            // Closing is best effort: SQLite has already made every committed transaction durable.
        }
    }

    // --- rows ---------------------------------------------------------------------------------------

    private static StoreIdentity readIdentity(SqliteDb c) throws SQLException {
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("identity.select"))) {
            if (!st.next()) {
                return null;
            }
            return new StoreIdentity(
                    st.getText("generation"),
                    st.getLong("floor"),
                    st.getBlob("proof_key"),
                    Instant.ofEpochMilli(st.getLong("created_at")));
        }
    }

    private static StoreIdentity ensureIdentity(SqliteDb c, Supplier<StoreIdentity> made) throws SQLException {
        StoreIdentity existing = readIdentity(c);
        if (existing != null) {
            return existing;
        }
        StoreIdentity candidate = Objects.requireNonNull(made.get(), "candidate");
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("identity.insert"))) {
            st.text(1, candidate.generation())
                    .integer(2, candidate.floor())
                    .blob(3, candidate.proofKey())
                    .integer(4, candidate.createdAt().toEpochMilli())
                    .update();
        }
        return readIdentity(c);
    }

    private static ResourceState readState(SqliteDb c, String resource) throws SQLException {
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("resource.select"))) {
            st.text(1, resource);
            if (!st.next()) {
                return ResourceState.empty(resource);
            }
            Lease lease = null;
            Long leaseToken = st.getLongOrNull("lease_token");
            if (leaseToken != null) {
                lease = new Lease(
                        st.getText("lease_holder"),
                        leaseToken,
                        instant(st, "lease_granted_at"),
                        instant(st, "lease_expires_at"),
                        st.getLong("lease_released") != 0,
                        st.getText("lease_grant_sha"));
            }
            Tip tip = null;
            Long tipToken = st.getLongOrNull("tip_token");
            if (tipToken != null) {
                tip = new Tip(
                        st.getText("tip_sha"),
                        tipToken,
                        st.getText("tip_holder"),
                        st.getText("tip_pusher"),
                        instant(st, "tip_at"));
            }
            return new ResourceState(
                    resource,
                    st.getLong("version"),
                    st.getLong("latest_granted"),
                    st.getLong("highest_accepted"),
                    lease,
                    st.getLong("base_token"),
                    st.getText("base_sha"),
                    st.getText("last_token_write_sha"),
                    tip);
        }
    }

    private static void writeState(SqliteDb c, ResourceState s) throws SQLException {
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("resource.upsert"))) {
            Lease lease = s.lease();
            Tip tip = s.tip();
            int i = 0;
            st.text(++i, s.resource());
            st.integer(++i, s.version());
            st.integer(++i, s.latestGranted());
            st.integer(++i, s.highestAccepted());
            st.text(++i, lease == null ? null : lease.holder());
            st.integerOrNull(++i, lease == null ? null : lease.token());
            st.integerOrNull(++i, lease == null ? null : epochMillis(lease.grantedAt()));
            st.integerOrNull(++i, lease == null ? null : epochMillis(lease.expiresAt()));
            st.integerOrNull(++i, lease == null ? null : (lease.released() ? 1L : 0L));
            st.text(++i, lease == null ? null : lease.grantSha());
            st.integer(++i, s.baseToken());
            st.text(++i, s.baseSha());
            st.text(++i, s.lastTokenWriteSha());
            st.text(++i, tip == null ? null : tip.sha());
            st.integerOrNull(++i, tip == null ? null : tip.token());
            st.text(++i, tip == null ? null : tip.holder());
            st.text(++i, tip == null ? null : tip.pusher());
            st.integerOrNull(++i, tip == null ? null : epochMillis(tip.at()));
            st.update();
        }
    }

    private static void insertEvents(SqliteDb c, List<LedgerEvent> events) throws SQLException {
        if (events.isEmpty()) {
            return;
        }
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("event.insert"))) {
            for (LedgerEvent e : events) {
                int i = 0;
                st.integer(++i, e.at().toEpochMilli());
                st.text(++i, e.type().label());
                st.text(++i, e.resource());
                st.text(++i, e.repo());
                st.text(++i, e.ref());
                st.text(++i, e.holder());
                st.text(++i, e.pusher());
                st.integer(++i, e.token());
                st.text(++i, e.oldSha());
                st.text(++i, e.newSha());
                st.text(++i, e.reason());
                st.text(++i, e.detail());
                st.update();
            }
        }
    }

    private LedgerEvent readEvent(SqliteDb.Statement st) throws SQLException {
        String type = st.getText("type");
        EventType eventType;
        try {
            eventType = EventType.valueOf(type.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new StoreUnavailableException("SQLite store " + file + " holds a ledger event of unknown type '"
                    + type + "' (seq " + st.getLong("seq") + "); was it written by a newer fence?");
        }
        return new LedgerEvent(
                st.getLong("seq"),
                instant(st, "at"),
                eventType,
                st.getText("resource"),
                st.getText("repo"),
                st.getText("ref"),
                st.getText("holder"),
                st.getText("pusher"),
                st.getLong("token"),
                st.getText("old_sha"),
                st.getText("new_sha"),
                st.getText("reason"),
                st.getText("detail"));
    }

    private void pruneBefore(SqliteDb c, List<LedgerEvent> appended) throws SQLException {
        if (!appended.isEmpty()) {
            long newest = Long.MIN_VALUE;
            for (LedgerEvent e : appended) {
                newest = Math.max(newest, e.at().toEpochMilli());
            }
            prune(c, newest, appended.size());
        }
    }

    /**
     * Drops a batch of events older than the store's retention, measured on the store's clock (the
     * database engine's), never on the clock of the client that appends: a client whose clock is far ahead
     * cannot erase the ledger. Under a test clock ({@link StoreOptions#callerClock()}) the newest appended
     * event's time stands in for it.
     */
    private void prune(SqliteDb c, long newestEventMillis, int appended) throws SQLException {
        pruneAt(c, callerClock ? newestEventMillis : storeNow(c), appended);
    }

    /** The store's clock: the database engine's, read now. */
    private static long storeNow(SqliteDb c) throws SQLException {
        return c.queryLong(Sql.SQL.get("clock.now"));
    }

    /** As {@link #prune}, counting back from {@code nowMillis}, the store's time of the call. */
    private void pruneAt(SqliteDb c, long nowMillis, int appended) throws SQLException {
        if (!pruning.due(nowMillis)) {
            return;
        }
        long cutoff = nowMillis - retentionMillis(c);
        if (cutoff > nowMillis) {
            return; // underflow: nothing can be that old
        }
        int batch = StoreOptions.pruneBatch(appended);
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("event.prune"))) {
            st.integer(1, cutoff).integer(2, batch).update();
        }
        pruning.looked(nowMillis, c.changes(), batch);
    }

    /**
     * The store's retention setting, taken from the opener when the store has none yet; a URL asking for
     * another value is refused. Inside a write transaction.
     */
    private long retentionMillis(SqliteDb c) throws SQLException {
        String stored = setting(c, RETENTION_SETTING);
        if (stored == null) {
            setSetting(c, RETENTION_SETTING, Long.toString(askedRetentionMillis));
            return askedRetentionMillis;
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

    private static String setting(SqliteDb c, String name) throws SQLException {
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("setting.select"))) {
            st.text(1, name);
            return st.next() ? st.getText("value") : null;
        }
    }

    private static void setSetting(SqliteDb c, String name, String value) throws SQLException {
        try (SqliteDb.Statement st = c.cached(Sql.SQL.get("setting.upsert"))) {
            st.text(1, name).text(2, value).update();
        }
    }

    /**
     * {@inheritDoc} One write transaction; the event is dated by the database engine's clock (the caller's
     * {@code now} under a test clock), and the trim counts back from that same reading.
     */
    @Override
    public Duration retention(Duration newRetention, String changedBy, Instant now, Supplier<StoreIdentity> candidate) {
        Objects.requireNonNull(now, "now");
        return run("retention", true, c -> {
            ensureIdentity(c, candidate);
            if (newRetention != null) {
                String stored = setting(c, RETENTION_SETTING);
                long oldMillis = stored == null ? askedRetentionMillis : Long.parseLong(stored);
                long newMillis = Math.max(0, saturatedMillis(newRetention));
                setSetting(c, RETENTION_SETTING, Long.toString(newMillis));
                long at = callerClock ? now.toEpochMilli() : storeNow(c);
                insertEvents(
                        c,
                        List.of(LedgerEvent.retention(
                                Instant.ofEpochMilli(at),
                                changedBy,
                                Duration.ofMillis(oldMillis),
                                Duration.ofMillis(newMillis))));
                pruning.reset();
                pruneAt(c, at, 1);
            }
            return Duration.ofMillis(retentionMillis(c));
        });
    }

    // --- helpers ------------------------------------------------------------------------------------

    private static void filter(List<String> where, List<Object> args, String column, String value) {
        if (value != null) {
            where.add(column + " = ?");
            args.add(value);
        }
    }

    private static void requirePositiveTtl(long ttlMillis) {
        if (ttlMillis <= 0) {
            throw new InternalException("lease length must be positive, got " + ttlMillis + " ms");
        }
    }

    private static Instant millis(Instant t) {
        return Instant.ofEpochMilli(t.toEpochMilli());
    }

    /** Stored instants are whole milliseconds, so "at or after" a fractional one starts at the next. */
    private static long ceilMillis(Instant t) {
        long ms = t.toEpochMilli();
        return t.getNano() % 1_000_000 == 0 ? ms : ms + 1;
    }

    private static Instant instant(SqliteDb.Statement st, String column) throws SQLException {
        Long ms = st.getLongOrNull(column);
        return ms == null ? null : Instant.ofEpochMilli(ms);
    }

    private static Long epochMillis(Instant t) {
        return t == null ? null : t.toEpochMilli();
    }

    private static int pragmaInt(SqliteDb c, String pragma) throws SQLException {
        return (int) c.queryLong(pragma);
    }

    private static long countTables(SqliteDb c) throws SQLException {
        return c.queryLong(Sql.SQL.get("schema.check"));
    }

    private static int remainingMillis(long deadline) {
        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, ms));
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

    private static boolean isBusy(SQLException e) {
        int code = primaryCode(e);
        return code == SQLITE_BUSY || code == SQLITE_LOCKED;
    }

    private static int primaryCode(SQLException e) {
        if (e instanceof SQLiteException se) {
            return se.getResultCode().code & 0xff;
        }
        return e.getErrorCode() & 0xff;
    }

    private StoreUnavailableException unavailable(SQLException e, String what) {
        String sqlite = e.getMessage();
        String message =
                switch (primaryCode(e)) {
                    case SQLITE_BUSY, SQLITE_LOCKED -> "SQLite store " + file
                            + " stayed locked by another writer (another fence process or store) for longer than"
                            + " the timeout of "
                            + Durations.format(timeout) + " (" + what + "); retry, or raise ?timeout= in the store URL";
                    case SQLITE_CORRUPT, SQLITE_NOTADB -> "SQLite store " + file
                            + " is damaged or is not a SQLite database (" + sqlite + "); restore it from a backup, or"
                            + " move it aside to start a new store generation (tokens and proofs issued before are"
                            + " then no longer honoured)";
                    case SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH -> "cannot open SQLite store "
                            + file + " for writing (" + sqlite + "); check that the file and its directory are"
                            + " writable by this user";
                    case SQLITE_IOERR, SQLITE_FULL -> "I/O error on SQLite store " + file + " during " + what + " ("
                            + sqlite + "); check the disk and file system";
                    default -> "SQLite store " + file + " failed during " + what + " (" + sqlite + ")";
                };
        return new StoreUnavailableException(message, e);
    }

    private static String describe(IOException e) {
        String reason = e.getMessage();
        return e.getClass().getSimpleName() + (reason == null ? "" : ": " + reason);
    }
}
