package dev.fence.store.redis;

import static dev.fence.store.redis.RedisCodec.hash;
import static dev.fence.store.redis.RedisCodec.lease;
import static dev.fence.store.redis.RedisCodec.list;
import static dev.fence.store.redis.RedisCodec.number;
import static dev.fence.store.redis.RedisCodec.string;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.InternalException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.Resources;
import dev.fence.core.StoreIdentity;
import dev.fence.core.StoreUnavailableException;
import dev.fence.store.StoreOptions;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A {@link LeaseStore} in Redis (standalone, or the primary a Sentinel setup points at), for several
 * hosts sharing one fence.
 *
 * <p>Every operation is one Lua script run with {@code EVALSHA}, so each is atomic on the server: state
 * change and ledger append happen together or not at all. The data model is described in {@link
 * dev.fence.store.redis}. {@link #commit} touches several resources' keys and the ledger in one script,
 * which Redis Cluster would refuse across hash slots; a Cluster store would need per-slot commits and is
 * not supported.
 *
 * <p><b>Failures.</b> A connection failure, timeout or a server that cannot serve (loading, out of
 * memory, read-only replica) is a {@link StoreUnavailableException} naming {@code host:port}, never the
 * password. When the reply to a write is lost, the script ran entirely or not at all and the caller
 * cannot tell which. With {@link StoreOptions#waitReplicas()} set, a write that fewer replicas
 * acknowledged than asked is also a {@link StoreUnavailableException}, though it was applied on the
 * primary. Wrong credentials, and a server that may evict keys ({@code maxmemory-policy allkeys-*},
 * which could drop a counter and so repeat tokens), are {@link ConfigException}s.
 *
 * <p><b>Waits.</b> Connect and reply timeouts are {@link StoreOptions#timeout()}; a call that finds a
 * stale pooled connection (the server restarted) reconnects once. {@link #query} reads the ledger in
 * pages: each page is bounded by the timeout, a very large query as a whole is not. A query naming a
 * resource or a repo reads only that resource's or repo's entries, through the ledger's indexes (sorted sets
 * of entry ids by seq, kept by the appending scripts); other queries read the stream.
 *
 * <p><b>Durability.</b> Lost or possibly rolled-back data is recognised by the identity record: a missing
 * {@code fence:meta}, or one written under another epoch of the server (its run id and replication id,
 * which every script reads with {@code INFO}: a restart, whatever the persistence, a promotion, a restore).
 * Either way the next call starts a new generation whose floor is the server's {@code TIME}: old proofs
 * are void and new tokens exceed all earlier ones. A server whose ACL denies {@code INFO} cannot be checked
 * this way.
 *
 * <p><b>Time.</b> The server's clock ({@code TIME}) decides lease expiry, ledger times and retention;
 * callers' {@code now} arguments are used only under {@link StoreOptions#callerClock()} (tests). Instants
 * are kept as epoch milliseconds; finer precision is dropped.
 *
 * <p><b>Connections.</b> One client, Jedis ({@link RedisConnections}), for every command. A long-running
 * process borrows a connection from a pool for each call; a hook ({@link StoreOptions#singleConnection()})
 * opens one connection for its two or three calls, which costs a fresh JVM a fraction of a pool. Jedis's
 * failures never leave the store: they are {@link StoreUnavailableException}, {@link ConfigException}
 * and {@link InternalException}, as described above.
 *
 * <p>Thread-safe: a pooled connection serves one call at a time, as does the single one, and the cached
 * identity is swapped atomically.
 */
public final class RedisLeaseStore implements LeaseStore {
    /**
     * How much earlier than {@code since} a query starts reading. Stream ids are the events' own times
     * (raised to stay increasing), never below them, so none is needed.
     */
    private static final Duration CLOCK_SKEW_ALLOWANCE = Duration.ZERO;

    private static final int QUERY_PAGE = 1000;

    private static final String PAGE = Integer.toString(QUERY_PAGE);

    private static final long MAX_EXACT_MILLIS = 1L << 53;

    /** Server replies that mean "cannot serve now", not "fence sent something wrong". */
    private static final List<String> TRANSIENT_ERRORS =
            List.of("LOADING", "BUSY", "OOM", "READONLY", "MASTERDOWN", "NOREPLICAS", "TRYAGAIN", "CLUSTERDOWN");

    /**
     * The server to connect to. For {@code redis-sentinel://}, the master the sentinels named last: set by
     * {@link #target()} on each new connection, before it only a placeholder that no message uses.
     */
    private volatile RedisUrl url;

    /** {@code redis-sentinel://}: finds the master and follows it through a failover; null otherwise. */
    private final SentinelMaster sentinel;

    private final StoreOptions options;

    /** A long-running process's connections: created on first use by {@link #pool()}. */
    private volatile ConnectionPool pool;

    /** {@link StoreOptions#singleConnection()}: the one connection, opened by open; guarded by itself. */
    private final Object directLock = new Object();

    private Connection direct;

    private volatile boolean closed;

    /** Guarded by {@link #directLock}: {@link #direct} has served a call (so it may have gone stale since). */
    private boolean directUsed;

    private final int timeoutMillis;
    private final AtomicReference<StoreIdentity> identity = new AtomicReference<>();

    /** The server's clock as the last identity-and-snapshot read saw it; null before the first. */
    private volatile ServerTime serverTime;

    /** Pooled connections that have served a call; the pool's factory forgets each one it destroys. */
    private final Set<Connection> pooled = ConcurrentHashMap.newKeySet();

    private RedisLeaseStore(RedisUrl url, SentinelMaster sentinel, StoreOptions options, int timeoutMillis) {
        this.url = url;
        this.sentinel = sentinel;
        this.options = options;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Begins, in the background, what a one-shot hook's first Redis connection sets up before it can
     * connect (the JDK's socket classes, Jedis's command table), while the hook reads its configuration
     * and its push; see {@link dev.fence.store.Stores#preload}.
     */
    public static void preload() {
        RedisConnections.preload();
    }

    /**
     * Opens a store at {@code url}: {@code redis://[user:password@]host[:port][/db]}, or {@code rediss://…}
     * for TLS (verified against the JVM's trust store), or {@code redis-sentinel://…} ({@link SentinelUrl},
     * the master its sentinels name, followed through failovers by {@link SentinelMaster}: with its query
     * string, for the sentinels' credentials). An unreachable server shows on the first operation,
     * not here, and a server that comes back later is used again. With {@link StoreOptions#singleConnection()}
     * (a hook, which opens its store on a thread of its own while it reads the push) this connects before it
     * returns; a failure to is not reported here, and the first operation connects again.
     *
     * @throws ConfigException when the URL is malformed (the message masks any password)
     */
    public static RedisLeaseStore open(String url, StoreOptions options) {
        Objects.requireNonNull(options, "options");
        int timeout =
                (int) Math.max(1, Math.min(Integer.MAX_VALUE, options.timeout().toMillis()));
        // --- redis-sentinel:// (SentinelMaster): connections go to target(), the master the sentinels name.
        SentinelMaster sentinel = null;
        RedisUrl parsed;
        if (SentinelUrl.matches(url)) {
            SentinelUrl sentinels = SentinelUrl.parse(url);
            sentinel = new SentinelMaster(sentinels, timeout);
            RedisUrl first = sentinels.sentinels().get(0);
            parsed = sentinels.master(first.host(), first.port());
        } else {
            parsed = RedisUrl.parse(url);
        }
        RedisLeaseStore store = new RedisLeaseStore(parsed, sentinel, options, timeout);
        // --- end redis-sentinel://
        if (options.singleConnection()) {
            store.connectNow();
        }
        return store;
    }

    /**
     * A hook's store connects in {@link #open}, on the hook's store thread, which has nothing else to do
     * until the push is read: no thread of its own (on a small machine, starting one and handing over to it
     * cost milliseconds of a hook's critical path). A failure is not reported here: the first call connects
     * again and reports it.
     */
    private void connectNow() {
        try {
            Connection c = RedisConnections.open(target(), timeoutMillis, RedisConnections.CLIENT_NAME);
            synchronized (directLock) {
                direct = c;
            }
        } catch (RuntimeException e) {
            // The first call connects again and reports it.
        }
    }

    /** The connection pool of a long-running process, made on its first pooled call. */
    private ConnectionPool pool() {
        ConnectionPool p = pool;
        if (p == null) {
            synchronized (this) {
                p = pool;
                if (p == null) {
                    p = RedisConnections.pool(target(), timeoutMillis, pooled);
                    pool = p;
                }
            }
        }
        return p;
    }

    // --- redis-sentinel:// (SentinelMaster)

    /** The server a new connection goes to: for {@code redis-sentinel://}, the master the sentinels name. */
    private RedisUrl target() {
        if (sentinel != null) {
            url = sentinel.current();
        }
        return url;
    }

    /**
     * {@code redis-sentinel://}: runs a call, following a failover ({@link SentinelMaster#follow}). Not a
     * lambda: a hook runs it (see {@link #identityAndSnapshot}).
     */
    private <T> T following(Supplier<T> call) {
        return sentinel.follow(call, new Runnable() {
            @Override
            public void run() {
                dropConnections();
            }
        });
    }

    /** After a failover: closes every connection, so that the next call connects to the new master. */
    private void dropConnections() {
        synchronized (directLock) {
            if (closed) {
                return;
            }
            closeQuietly(direct);
            direct = null;
        }
        ConnectionPool p;
        synchronized (this) {
            p = pool;
            pool = null;
        }
        if (p != null) {
            p.close();
        }
    }

    // --- end redis-sentinel://

    @Override
    public StoreIdentity identity(StoreIdentity candidate) {
        Objects.requireNonNull(candidate, "candidate");
        StoreIdentity known = identity.get();
        List<String> args = new ArrayList<>(candidateArgs(candidate, options));
        args.add(known == null ? "" : known.generation());
        // The floor and creation time are the server's (TIME, in the script), never the candidate's.
        List<?> reply = list(call("identity", c -> {
            List<?> r = list(c.eval(Scripts.IDENTITY, List.of(RedisKeys.META), args));
            if (number(r.get(r.size() - 1)) == 1) {
                awaitReplicas(c);
            }
            return r;
        }));
        String generation = string(reply.get(1));
        if ("same".equals(string(reply.get(0)))
                && known != null
                && known.generation().equals(generation)) {
            return known;
        }
        StoreIdentity current = new StoreIdentity(
                generation,
                number(reply.get(2)),
                Base64.getDecoder().decode(string(reply.get(3))),
                Instant.ofEpochMilli(number(reply.get(4))));
        identity.set(current);
        return current;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The script is first sent without a candidate; only a store that has no identity (its first
     * grant, or after a data loss) answers so, and the call is repeated with one.
     */
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
        requireValidLease(ttlMillis, now);
        List<String> keys = acquireKeys(resource);
        StoreIdentity offered = null;
        for (int attempt = 0; ; attempt++) {
            List<String> args =
                    acquireArgs(resource, holder, ttlMillis, nowArg(now), grantSha, ownToken, offered, options);
            List<?> reply = list(call("acquire", c -> {
                List<?> r = list(c.eval(Scripts.ACQUIRE, keys, args));
                if ("granted".equals(string(r.get(0)))) {
                    awaitReplicas(c);
                }
                return r;
            }));
            String kind = string(reply.get(0));
            if ("no-identity".equals(kind)) {
                if (attempt > 0) {
                    throw new InternalException("acquire script asked for an identity it was given");
                }
                offered = Objects.requireNonNull(candidate.get(), "candidate");
                continue;
            }
            if ("busy".equals(kind)) {
                return new AcquireResult.Busy(
                        resource,
                        string(reply.get(1)),
                        number(reply.get(2)),
                        Instant.ofEpochMilli(number(reply.get(3))));
            }
            String generation = string(reply.get(1));
            noteGeneration(generation);
            Map<String, String> previous = hash(reply.get(3));
            long grantedAt = number(reply.get(4));
            return new AcquireResult.Granted(
                    resource,
                    holder,
                    number(reply.get(2)),
                    generation,
                    Instant.ofEpochMilli(grantedAt),
                    Instant.ofEpochMilli(grantedAt + ttlMillis),
                    lease(previous),
                    RedisCodec.tip(previous));
        }
    }

    /** The keys of a script that appends a lease event of {@code resource}: acquire and release. */
    private static List<String> acquireKeys(String resource) {
        List<String> keys = new ArrayList<>(
                List.of(RedisKeys.META, RedisKeys.state(resource), RedisKeys.LEDGER, RedisKeys.LEDGER_SEQ));
        Resources.GitRef git = Resources.parse(resource).orElse(null);
        keys.addAll(RedisKeys.eventIndexes(resource, git == null ? null : git.repoId()));
        return keys;
    }

    /**
     * Encodes {@code e} into {@code args} (see {@code read_events} in lib.lua), adding its index keys to
     * {@code keys} once each; {@code positions} remembers where each key is.
     */
    private static void encodeEvent(
            LedgerEvent e, List<String> keys, Map<String, Integer> positions, List<String> args) {
        RedisCodec.encodeEvent(e, args);
        List<String> indexes = RedisKeys.eventIndexes(e.resource(), e.repo());
        args.add(Integer.toString(indexes.size()));
        for (String key : indexes) {
            Integer at = positions.get(key);
            if (at == null) {
                keys.add(key);
                at = keys.size();
                positions.put(key, at);
            }
            args.add(Integer.toString(at));
        }
    }

    private static List<String> acquireArgs(
            String resource,
            String holder,
            long ttlMillis,
            String now,
            String grantSha,
            long ownToken,
            StoreIdentity candidate,
            StoreOptions options) {
        Resources.GitRef git = Resources.parse(resource).orElse(null);
        List<String> args = new ArrayList<>(List.of(holder, Long.toString(ttlMillis), now, orEmpty(grantSha)));
        args.addAll(candidate == null ? List.of("", "", "") : candidateArgs(candidate, options));
        args.add(options.retentionArgument());
        args.add(resource);
        args.add(git == null ? "" : git.repoId());
        args.add(git == null ? "" : git.ref());
        args.add(ownToken == ANY_OWN_TOKEN ? "" : Long.toString(ownToken));
        return args;
    }

    /**
     * The arguments of the {@code EVALSHA} that {@link #acquire} sends (after the command name), for
     * {@code fence bench}, which has {@code redis-benchmark} send the same script with the same keys and
     * arguments as a yardstick: without a candidate identity, as a store that has one is sent. The script
     * must already be loaded (any acquire loads it).
     */
    public static List<String> acquireEvalshaArguments(
            String resource, String holder, long ttlMillis, Instant now, StoreOptions options) {
        List<String> keys = acquireKeys(resource);
        List<String> out = new ArrayList<>();
        out.add(Scripts.ACQUIRE.sha1());
        out.add(Integer.toString(keys.size()));
        out.addAll(keys);
        out.addAll(acquireArgs(
                resource,
                holder,
                ttlMillis,
                options.callerClock() ? Long.toString(now.toEpochMilli()) : "",
                null,
                ANY_OWN_TOKEN,
                null,
                options));
        return out;
    }

    @Override
    public LeaseCheck renew(String resource, String holder, long token, long ttlMillis, Instant now) {
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(now, "now");
        requireValidLease(ttlMillis, now);
        Resources.GitRef git = Resources.parse(resource).orElse(null);
        List<String> args = List.of(
                holder,
                Long.toString(token),
                Long.toString(ttlMillis),
                nowArg(now),
                retentionMillis(),
                resource,
                git == null ? "" : git.repoId(),
                git == null ? "" : git.ref());
        return leaseCheck("renew", Scripts.RENEW, acquireKeys(resource), args);
    }

    @Override
    public LeaseCheck release(String resource, String holder, long token, Instant now) {
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(now, "now");
        Resources.GitRef git = Resources.parse(resource).orElse(null);
        List<String> args = List.of(
                holder,
                Long.toString(token),
                nowArg(now),
                retentionMillis(),
                resource,
                git == null ? "" : git.repoId(),
                git == null ? "" : git.ref());
        return leaseCheck("release", Scripts.RELEASE, acquireKeys(resource), args);
    }

    @Override
    public LeaseCheck moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(holder, "holder");
        List<String> args = List.of(holder, Long.toString(token), orEmpty(expectedSha), orEmpty(newSha));
        return leaseCheck(
                "move grant sha", Scripts.MOVE_GRANT_SHA, List.of(RedisKeys.META, RedisKeys.state(resource)), args);
    }

    @Override
    public Map<String, ResourceState> snapshot(Collection<String> resources) {
        List<String> names = new ArrayList<>(new LinkedHashSet<>(resources));
        if (names.isEmpty()) {
            return Map.of();
        }
        List<String> keys = names.stream().map(RedisKeys::state).toList();
        List<?> reply = list(call("snapshot", c -> c.eval(Scripts.SNAPSHOT, keys, List.of())));
        Map<String, ResourceState> states = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            states.put(names.get(i), RedisCodec.state(names.get(i), hash(reply.get(i))));
        }
        return Collections.unmodifiableMap(states);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One script, one round trip: the identity (only its generation when the cached one is current),
     * the states, and on a store's first call the eviction-policy check too.
     */
    @Override
    public IdentifiedSnapshot identityAndSnapshot(Collection<String> resources, Supplier<StoreIdentity> candidate) {
        List<String> names = new ArrayList<>(new LinkedHashSet<>(resources));
        List<String> keys = new ArrayList<>(names.size() + 1);
        keys.add(RedisKeys.META);
        for (String name : names) {
            keys.add(RedisKeys.state(name));
        }
        for (int attempt = 0; attempt < 3; attempt++) {
            StoreIdentity known = identity.get();
            List<String> args = List.of(known == null ? "" : known.generation());
            // Not lambdas, here and in commit: these run in every hook process, where linking a lambda costs
            // milliseconds of method-handle set-up (see dev.fence.cli.Main).
            List<?> reply = list(call("snapshot", new Function<Link, Object>() {
                @Override
                public Object apply(Link c) {
                    return c.eval(Scripts.IDENTITY_SNAPSHOT, keys, args);
                }
            }));
            String kind = string(reply.get(0));
            if (kind.equals("missing")) {
                identity(candidate.get());
                continue;
            }
            StoreIdentity current;
            int first;
            if (kind.equals("same")) {
                if (known == null || !known.generation().equals(string(reply.get(1)))) {
                    continue; // the cache moved meanwhile: read again
                }
                current = known;
                first = 2;
            } else {
                current = new StoreIdentity(
                        string(reply.get(1)),
                        number(reply.get(2)),
                        Base64.getDecoder().decode(string(reply.get(3))),
                        Instant.ofEpochMilli(number(reply.get(4))));
                identity.set(current);
                first = 5;
            }
            Map<String, ResourceState> states = new LinkedHashMap<>();
            for (int i = 0; i < names.size(); i++) {
                states.put(names.get(i), RedisCodec.state(names.get(i), hash(reply.get(first + i))));
            }
            serverTime = new ServerTime(number(reply.get(first + names.size())), System.nanoTime());
            return new IdentifiedSnapshot(current, Collections.unmodifiableMap(states));
        }
        throw new StoreUnavailableException("Redis at " + url.address()
                + " kept losing its identity record while it was read; is something deleting fence's keys?");
    }

    /** {@inheritDoc} The cached identity when it is of {@code generation}: no round trip. */
    @Override
    public StoreIdentity identityOf(String generation, Supplier<StoreIdentity> candidate) {
        StoreIdentity known = identity.get();
        if (known != null && known.generation().equals(generation)) {
            return known;
        }
        return identity(candidate.get());
    }

    @Override
    public CommitResult commit(List<ResourceWrite> writes, List<LedgerEvent> events) {
        if (writes.isEmpty() && events.isEmpty()) {
            return new CommitResult.Committed();
        }
        Set<String> seen = new HashSet<>();
        List<String> keys = new ArrayList<>(List.of(RedisKeys.META, RedisKeys.LEDGER, RedisKeys.LEDGER_SEQ));
        String generation =
                writes.isEmpty() ? currentGeneration() : writes.get(0).generation();
        List<String> args = new ArrayList<>(
                List.of(retentionMillis(), generation, clockFlag(), Integer.toString(writes.size()), notAfter()));
        for (ResourceWrite w : writes) {
            if (!w.generation().equals(generation)) {
                throw new InternalException(
                        "commit mixes writes of generations " + generation + " and " + w.generation());
            }
            if (!seen.add(w.resource())) {
                throw new InternalException("commit lists resource " + w.resource() + " twice");
            }
            if (w.latestGranted() < 0 || w.highestAccepted() < 0 || w.baseToken() < 0) {
                throw new InternalException("commit of " + w.resource() + " carries a negative token");
            }
            keys.add(RedisKeys.state(w.resource()));
            args.add(Long.toString(w.expectedVersion()));
            args.add(Long.toString(w.latestGranted()));
            args.add(Long.toString(w.highestAccepted()));
            List<String> set = RedisCodec.fieldsToSet(w);
            args.add(Integer.toString(set.size() / 2));
            args.addAll(set);
            List<String> del = RedisCodec.fieldsToDelete(w);
            args.add(Integer.toString(del.size()));
            args.addAll(del);
        }
        args.add(Integer.toString(events.size()));
        Map<String, Integer> positions = new HashMap<>();
        for (LedgerEvent e : events) {
            encodeEvent(e, keys, positions, args);
        }
        List<?> reply = list(call("commit", new Function<Link, Object>() {
            @Override
            public Object apply(Link c) {
                List<?> r = list(c.eval(Scripts.COMMIT, keys, args));
                if ("committed".equals(string(r.get(0)))) {
                    awaitReplicas(c);
                }
                return r;
            }
        }));
        return switch (string(reply.get(0))) {
            case "committed" -> new CommitResult.Committed();
            case "late" -> throw late("commit");
            case "conflict" -> {
                int index = (int) number(reply.get(1));
                if (index == 0) {
                    // The generation changed (or the server's epoch did): forget it, so the caller's next
                    // read starts from the store's current identity.
                    noteGeneration("");
                    yield new CommitResult.Conflict(
                            writes.isEmpty() ? "-" : writes.get(0).resource());
                }
                yield new CommitResult.Conflict(writes.get(index - 1).resource());
            }
            case "lower" -> {
                ResourceWrite w = writes.get((int) number(reply.get(1)) - 1);
                boolean counter = "counter".equals(string(reply.get(2)));
                throw new InternalException("commit would lower the " + (counter ? "counter" : "highest accepted token")
                        + " of " + w.resource() + " from " + string(reply.get(3)) + " to "
                        + (counter ? w.latestGranted() : w.highestAccepted()) + "; nothing was written");
            }
            default -> throw new InternalException("unexpected reply from commit script: " + reply);
        };
    }

    @Override
    public void append(List<LedgerEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        List<String> args =
                new ArrayList<>(List.of(retentionMillis(), clockFlag(), notAfter(), Integer.toString(events.size())));
        List<String> keys = new ArrayList<>(List.of(RedisKeys.META, RedisKeys.LEDGER, RedisKeys.LEDGER_SEQ));
        Map<String, Integer> positions = new HashMap<>();
        for (LedgerEvent e : events) {
            encodeEvent(e, keys, positions, args);
        }
        // A class: a refused push appends from a hook process, whose path LauncherArchiveIT keeps lambda-free.
        call("append", new Function<Link, Object>() {
            @Override
            public Object apply(Link c) {
                Object r = c.eval(Scripts.APPEND, keys, args);
                if (r instanceof Long n && n < 0) {
                    throw late("append");
                }
                awaitReplicas(c);
                return r;
            }
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>Reads the ledger in pages, newest first when a limit is set; events appended meanwhile may or
     * may not be included. Events of a type this version does not know are skipped.
     */
    @Override
    public List<LedgerEvent> query(LedgerQuery query) {
        String lowest = query.since() == null
                ? "-"
                : Long.toString(Math.max(0, query.since().toEpochMilli() - CLOCK_SKEW_ALLOWANCE.toMillis()));
        int limit = Math.max(0, query.limit());
        String index = query.resource() != null
                ? RedisKeys.eventsOfResource(query.resource())
                : query.repo() != null ? RedisKeys.eventsOfRepo(query.repo()) : null;
        return call("query", c -> {
            if (index != null) {
                List<LedgerEvent> indexed = indexed(c, index, query, limit);
                if (indexed != null) {
                    return indexed;
                }
            }
            return limit > 0 ? newest(c.verified(), query, lowest, limit) : oldestFirst(c.verified(), query, lowest);
        });
    }

    /**
     * The query through a ledger index ({@code ledger_page.lua}): only the entries of that resource or repo
     * are read, newest first when a limit is set (stopping at it, or at the first entry older than {@code
     * since}), else oldest first. Null when the stream still holds events from before it was indexed.
     */
    private static List<LedgerEvent> indexed(Link c, String index, LedgerQuery query, int limit) {
        boolean newest = limit > 0;
        long since = query.since() == null ? Long.MIN_VALUE : query.since().toEpochMilli();
        List<LedgerEvent> out = new ArrayList<>();
        String after = "";
        // A small limit reads a small page first; filters that drop entries make the later pages full size.
        int count = newest ? Math.min(QUERY_PAGE, limit) : QUERY_PAGE;
        while (true) {
            stopIfAbandoned();
            List<?> page = list(c.eval(
                    Scripts.LEDGER_PAGE,
                    List.of(RedisKeys.META, RedisKeys.LEDGER, index),
                    List.of(newest ? "newest" : "oldest", after, Integer.toString(count))));
            if (page.size() == 1 && "scan".equals(string(page.get(0)))) {
                return null;
            }
            for (Object entry : page.subList(2, page.size())) {
                String id = string(list(entry).get(0));
                // An entry's id is never below its time, and ids increase with seq: newest first, the first id
                // before 'since' ends the query.
                if (newest && Long.parseLong(id.substring(0, id.indexOf('-'))) < since) {
                    Collections.reverse(out);
                    return out;
                }
                LedgerEvent e = RedisCodec.event(hash(list(entry).get(1)));
                if (e != null && query.matches(e)) {
                    out.add(e);
                    if (newest && out.size() == limit) {
                        Collections.reverse(out);
                        return out;
                    }
                }
            }
            if (number(page.get(0)) < count) {
                if (newest) {
                    Collections.reverse(out);
                }
                return out;
            }
            after = string(page.get(1));
            count = QUERY_PAGE;
        }
    }

    /**
     * Ends a ledger query between pages once its caller has given up on it: fence serve interrupts a
     * store call it stopped waiting for, and a query of a whole stream would otherwise hold a thread of
     * the server's bounded pool for as long as the scan takes.
     */
    private static void stopIfAbandoned() {
        if (Thread.currentThread().isInterrupted()) {
            throw new StoreUnavailableException("the ledger query was abandoned: its caller stopped waiting");
        }
    }

    private static List<LedgerEvent> oldestFirst(Connection c, LedgerQuery query, String lowest) {
        List<LedgerEvent> out = new ArrayList<>();
        String start = lowest;
        while (true) {
            stopIfAbandoned();
            List<?> page = list(RedisConnections.call(
                    c, Protocol.Command.XRANGE, List.of(RedisKeys.LEDGER, start, "+", "COUNT", PAGE)));
            for (Object entry : page) {
                LedgerEvent e = RedisCodec.event(hash(list(entry).get(1)));
                if (e != null && query.matches(e)) {
                    out.add(e);
                }
            }
            if (page.size() < QUERY_PAGE) {
                return out;
            }
            start = "(" + string(list(page.get(page.size() - 1)).get(0));
        }
    }

    private static List<LedgerEvent> newest(Connection c, LedgerQuery query, String lowest, int limit) {
        List<LedgerEvent> out = new ArrayList<>();
        String end = "+";
        while (true) {
            stopIfAbandoned();
            List<?> page = list(RedisConnections.call(
                    c, Protocol.Command.XREVRANGE, List.of(RedisKeys.LEDGER, end, lowest, "COUNT", PAGE)));
            for (Object entry : page) {
                LedgerEvent e = RedisCodec.event(hash(list(entry).get(1)));
                if (e != null && query.matches(e)) {
                    out.add(e);
                    if (out.size() == limit) {
                        Collections.reverse(out);
                        return out;
                    }
                }
            }
            if (page.size() < QUERY_PAGE) {
                Collections.reverse(out);
                return out;
            }
            end = "(" + string(list(page.get(page.size() - 1)).get(0));
        }
    }

    @Override
    public String describe() {
        return sentinel == null ? url.describe() : sentinel.describe();
    }

    @Override
    public void close() {
        try {
            synchronized (directLock) {
                closed = true;
                closeQuietly(direct);
                direct = null;
            }
            ConnectionPool p = pool;
            if (p != null) {
                p.close();
            }
        } catch (RuntimeException e) {
            // Closing is best effort: the server may already be gone.
        }
    }

    @Override
    public String toString() {
        return "RedisLeaseStore[" + describe() + "]";
    }

    private LeaseCheck leaseCheck(String operation, LuaScript script, List<String> keys, List<String> args) {
        List<?> reply = list(call(operation, c -> {
            List<?> r = list(c.eval(script, keys, args));
            if ("ok".equals(string(r.get(0)))) {
                awaitReplicas(c);
            }
            return r;
        }));
        Map<String, String> state = hash(reply.get(1));
        if ("ok".equals(string(reply.get(0)))) {
            return new LeaseCheck.Ok(lease(state));
        }
        return new LeaseCheck.Refused(number(state.get(RedisCodec.COUNTER)), lease(state));
    }

    /** Forgets the cached identity when a script reports another generation, so identity() reloads it. */
    private void noteGeneration(String generation) {
        StoreIdentity known = identity.get();
        if (known != null && !known.generation().equals(generation)) {
            identity.compareAndSet(known, null);
        }
    }

    /**
     * Runs {@code body} on a connection from the pool, translating Jedis failures into fence's.
     *
     * <p>A new connection has just proved itself in its handshake. A pooled one may predate a server
     * restart: when the first script it runs fails at the connection (not by a timeout), the connection is
     * taken as stale, the idle ones are dropped and a fresh connection is tried once. No {@code PING} is
     * spent per call: it would cost the server a command and tell nothing more, since a reply lost to a
     * broken connection is ambiguous either way. A timeout is not retried, which keeps a hung server's
     * cost to about one timeout. A script sent to a stale socket never reached a server, except in one
     * case: a server that crashed after running it and before answering. A retried script then runs
     * twice, which the scripts tolerate: tokens only go up (a second acquire issues one more), and a
     * repeated commit or release finds the version or lease moved and is refused.
     *
     * <p>Every script checks the server's eviction policy and epoch itself (lib.lua), on every call.
     */
    private <T> T call(String operation, Function<Link, T> body) {
        if (sentinel != null) { // redis-sentinel://
            return following(new Supplier<T>() {
                @Override
                public T get() {
                    return callOnce(operation, body);
                }
            });
        }
        return callOnce(operation, body);
    }

    private <T> T callOnce(String operation, Function<Link, T> body) {
        try {
            return options.singleConnection() ? callDirect(body) : callPooled(body);
        } catch (LuaScript.StaleConnection e) {
            throw translate(operation, e.getCause());
        } catch (JedisException e) {
            throw translate(operation, e);
        }
    }

    /**
     * Whether a call whose connection turned out stale goes again on a new one: once, and not after a
     * timeout (a server that does not answer would only be waited for twice).
     */
    private static boolean retryOnNewConnection(int attempt, LuaScript.StaleConnection e) {
        return attempt == 0 && causedBy(e, SocketTimeoutException.class) == null;
    }

    /**
     * Runs {@code body} on the store's one connection ({@link StoreOptions#singleConnection()}), opened on
     * first use; a connection failure closes it, so the next call opens a new one.
     */
    private <T> T callDirect(Function<Link, T> body) {
        synchronized (directLock) {
            try {
                for (int attempt = 0; ; attempt++) {
                    boolean reused = direct != null && directUsed;
                    if (direct == null) {
                        direct = RedisConnections.open(target(), timeoutMillis, RedisConnections.CLIENT_NAME);
                        directUsed = false;
                    }
                    try {
                        // As with pooled connections: one that served a call before and fails at the connection
                        // is replaced once.
                        T result = body.apply(new Link(direct, reused));
                        directUsed = true;
                        return result;
                    } catch (LuaScript.StaleConnection e) {
                        closeQuietly(direct);
                        direct = null;
                        if (!retryOnNewConnection(attempt, e)) {
                            throw e;
                        }
                    }
                }
            } catch (JedisConnectionException e) {
                closeQuietly(direct);
                direct = null;
                throw e;
            }
        }
    }

    private <T> T callPooled(Function<Link, T> body) {
        for (int attempt = 0; ; attempt++) {
            Connection c = pool().getResource();
            try {
                return body.apply(new Link(c, pooled.contains(c)));
            } catch (LuaScript.StaleConnection e) {
                if (!retryOnNewConnection(attempt, e)) {
                    throw e;
                }
                pool().clear();
            } finally {
                if (!c.isBroken()) {
                    pooled.add(c);
                }
                c.close();
            }
        }
    }

    private static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // Closing is best effort: the server may already be gone.
            }
        }
    }

    /**
     * A borrowed connection. When it served calls before, a connection failure of its first script is a
     * {@link LuaScript.StaleConnection} (see {@link #callPooled}); other commands get a {@code PING}
     * first.
     */
    private static final class Link {
        final Connection connection;

        private boolean verify;

        Link(Connection connection, boolean verify) {
            this.connection = connection;
            this.verify = verify;
        }

        Object eval(LuaScript script, List<String> keys, List<String> args) {
            boolean ping = verify;
            verify = false;
            return script.eval(connection, keys, args, ping);
        }

        /** {@code WAIT replicas millis}, with a read timeout long enough for it. */
        long waitReplicas(int replicas, long millis, int timeoutMillis) {
            connection.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMillis + millis));
            try {
                return number(RedisConnections.call(
                        connection, Protocol.Command.WAIT, List.of(Integer.toString(replicas), Long.toString(millis))));
            } finally {
                if (!connection.isBroken()) {
                    connection.setSoTimeout(timeoutMillis);
                }
            }
        }

        /** The connection, checked with a {@code PING} round trip if it served calls before. */
        Connection verified() {
            if (verify) {
                verify = false;
                try {
                    connection.ping();
                } catch (JedisConnectionException e) {
                    throw new LuaScript.StaleConnection(e);
                }
            }
            return connection;
        }
    }

    /** How the scripts refuse a URL that asks for a retention other than the store's (see lib.lua). */
    private static final String RETENTION = "FENCE-RETENTION ";

    private ConfigException retentionMismatch(Duration stored) {
        return new ConfigException("the store URL asks for ledger retention " + Durations.format(options.retention())
                + ", but the store's retention is " + Durations.format(stored) + ": retention is a setting of the"
                + " store, the same for every client; drop ?retention= from the URL, or change it for everyone"
                + " with `fence store retention --set DURATION`");
    }

    /**
     * {@inheritDoc} One script: the setting kept with the identity record. A change names the setting it
     * expects to replace and is retried when another change came first, so its event names the value it
     * replaced; the event is dated by the server's clock ({@code now} under a test clock).
     */
    @Override
    public Duration retention(Duration newRetention, String changedBy, Instant now, Supplier<StoreIdentity> candidate) {
        Objects.requireNonNull(now, "now");
        String seen = "";
        for (int attempt = 0; attempt < 4; attempt++) {
            List<String> keys = new ArrayList<>(List.of(RedisKeys.META, RedisKeys.LEDGER, RedisKeys.LEDGER_SEQ));
            List<String> args = new ArrayList<>();
            if (newRetention == null) {
                args.addAll(List.of("", retentionMillis(), "", ""));
            } else {
                long newMillis = Math.max(0, newRetention.toMillis());
                Duration old = seen.isEmpty() ? options.retention() : Duration.ofMillis(Long.parseLong(seen));
                args.addAll(List.of(Long.toString(newMillis), retentionMillis(), seen, clockFlag()));
                LedgerEvent event = LedgerEvent.retention(now, changedBy, old, Duration.ofMillis(newMillis));
                encodeEvent(event, keys, new HashMap<>(), args);
            }
            List<?> reply = list(call("retention", c -> c.eval(Scripts.RETENTION, keys, args)));
            String outcome = string(reply.get(0));
            if ("retention".equals(outcome)) {
                return Duration.ofMillis(Long.parseLong(string(reply.get(1))));
            } else if ("changed".equals(outcome)) {
                seen = string(reply.get(1));
            } else {
                identity(candidate.get());
            }
        }
        throw new StoreUnavailableException("Redis at " + url.address() + " lost its identity record, or its"
                + " retention kept changing, while the retention was read or set; is something deleting or"
                + " rewriting fence's keys?");
    }

    /** How the scripts' guard refuses a server that may evict keys (see lib.lua). */
    private static final String EVICTING = "FENCE-EVICTING ";

    private ConfigException evicting(String policy) {
        return new ConfigException("Redis at " + url.address() + " has maxmemory-policy " + policy
                + ", which may evict fence's counters and so repeat tokens;"
                + " set maxmemory-policy to noeviction (or a volatile-* policy)");
    }

    /** WAITs for the configured replicas on the connection that made the write, as WAIT requires. */
    private void awaitReplicas(Link link) {
        int wanted = options.waitReplicas();
        if (wanted <= 0) {
            return;
        }
        long waitMillis = Math.max(1, options.waitTimeout().toMillis());
        long acked = link.waitReplicas(wanted, waitMillis, timeoutMillis);
        if (acked < wanted) {
            throw new StoreUnavailableException("Redis at " + url.address() + " applied the write, but only " + acked
                    + " of " + wanted + " replicas acknowledged it within "
                    + Durations.format(Duration.ofMillis(waitMillis))
                    + "; it may be lost if the primary fails now");
        }
    }

    private RuntimeException translate(String operation, JedisException e) {
        String where = "Redis at " + url.address();
        JedisAccessControlException denied = causedBy(e, JedisAccessControlException.class);
        if (denied != null) {
            return new ConfigException(
                    where + " refused fence's credentials (" + scrub(denied.getMessage())
                            + "); check the user and password in the store URL",
                    e);
        }
        JedisDataException data = causedBy(e, JedisDataException.class);
        if (data != null && data.getMessage() != null && data.getMessage().startsWith(RETENTION)) {
            String stored = data.getMessage().substring(RETENTION.length()).split("[ ,]", 2)[0];
            return retentionMismatch(Duration.ofMillis(Long.parseLong(stored)));
        }
        if (data != null && data.getMessage() != null && data.getMessage().startsWith(EVICTING)) {
            String policy = data.getMessage().substring(EVICTING.length()).split("[ ,]", 2)[0];
            return evicting(policy);
        }
        if (data != null) {
            String message = scrub(data.getMessage());
            String code = message.split(" ", 2)[0];
            if (TRANSIENT_ERRORS.contains(code)) {
                return new StoreUnavailableException(where + " cannot serve " + operation + " now: " + message, e);
            }
            return new InternalException(where + " failed " + operation + ": " + message, e);
        }
        return new StoreUnavailableException(
                where + " is unavailable (" + operation + "): " + scrub(rootMessage(e)), e);
    }

    private static <X extends Throwable> X causedBy(Throwable t, Class<X> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }

    private static String rootMessage(Throwable t) {
        List<String> parts = new ArrayList<>();
        for (Throwable c = t; c != null; c = c.getCause()) {
            String m = c.getMessage();
            if (m != null && !m.isBlank() && parts.stream().noneMatch(p -> p.contains(m))) {
                parts.add(m);
            }
        }
        return parts.isEmpty() ? t.getClass().getSimpleName() : String.join(": ", parts);
    }

    /** Messages come from Jedis and the server; none should hold the password, but none ever may. */
    private String scrub(String message) {
        if (message == null) {
            return "";
        }
        String password = url.password();
        return password == null || password.isEmpty() ? message : message.replace(password, "***");
    }

    private String retentionMillis() {
        return options.retentionArgument();
    }

    /**
     * A candidate's generation id and proof key. Its floor and creation time are the server's to set (from
     * TIME), unless a test clock decides ({@link StoreOptions#callerClock()}): then the candidate's time.
     */
    private static List<String> candidateArgs(StoreIdentity candidate, StoreOptions options) {
        return List.of(
                candidate.generation(),
                Base64.getEncoder().encodeToString(candidate.proofKey()),
                options.callerClock() ? Long.toString(candidate.createdAt().toEpochMilli()) : "");
    }

    /** Lua numbers are doubles: instants and lease ends must stay below 2^53 ms to be exact. */
    private static void requireValidLease(long ttlMillis, Instant now) {
        if (ttlMillis <= 0) {
            throw new InvalidInputException("lease ttl must be positive, got " + ttlMillis + " ms");
        }
        long nowMillis = now.toEpochMilli();
        if (nowMillis < 0 || ttlMillis >= MAX_EXACT_MILLIS - nowMillis) {
            throw new InvalidInputException("lease ttl of " + ttlMillis + " ms from " + now + " is out of range");
        }
    }

    /** A reading of the server's clock ({@code TIME}, ms) and this process's monotonic clock when it arrived. */
    private record ServerTime(long serverMillis, long receivedNanos) {}

    /** How long a reading of the server's clock bounds later writes; past it, they go unbounded. */
    private static final long SERVER_TIME_FRESH_MILLIS = 10_000;

    /**
     * The latest moment, on the server's clock, at which a write sent now may still run (the scripts'
     * {@code not_after}): the server's time estimated from the last identity-and-snapshot read, plus the
     * reply timeout, less a margin for the reply's way back. A server busy with a slow command reads a
     * request only once it is done, and runs it even when its client has timed out and closed the
     * connection; by then the caller (a hook) has answered as if the store were down, and a write that
     * landed after would be a decision git never saw. The estimate trails the server's clock by the read's
     * way back, so the bound errs early. Empty (no bound) without a reading of the last ten seconds: a
     * long-idle process's estimate could have drifted, and a write with no read before it is not a hook's.
     */
    private String notAfter() {
        ServerTime t = serverTime;
        if (t == null) {
            return "";
        }
        long since = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t.receivedNanos());
        if (since > SERVER_TIME_FRESH_MILLIS) {
            return "";
        }
        long margin = Math.max(1, Math.min(100, timeoutMillis / 4));
        return Long.toString(t.serverMillis() + since + timeoutMillis - margin);
    }

    /** A write the server reached after its caller's time had run out: nothing was written. */
    private StoreUnavailableException late(String operation) {
        return new StoreUnavailableException("Redis at " + url.address() + " ran the " + operation + " only after"
                + " this call's " + timeoutMillis + " ms had run out (the server was busy with something"
                + " slow); nothing was written");
    }

    /** For scripts that append callers' events: empty to have the server's clock set their times, else kept. */
    private String clockFlag() {
        return options.callerClock() ? "caller" : "";
    }

    /** {@inheritDoc} {@code TIME}, one round trip. */
    @Override
    public Optional<Instant> now() {
        if (options.callerClock()) {
            return Optional.empty();
        }
        List<?> time = list(call("time", c -> RedisConnections.call(c.verified(), Protocol.Command.TIME, List.of())));
        long seconds = Long.parseLong(RedisCodec.string(time.get(0)));
        long micros = Long.parseLong(RedisCodec.string(time.get(1)));
        return Optional.of(Instant.ofEpochSecond(seconds, micros * 1_000));
    }

    /** The generation last read, or empty when none is cached (a commit of events alone then conflicts). */
    private String currentGeneration() {
        StoreIdentity known = identity.get();
        return known == null ? "" : known.generation();
    }

    /** A script's time argument: empty for the server's clock, or the caller's under {@link StoreOptions#callerClock()}. */
    private String nowArg(Instant now) {
        return options.callerClock() ? Long.toString(now.toEpochMilli()) : "";
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }
}
