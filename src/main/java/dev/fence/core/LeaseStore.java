package dev.fence.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Where fence keeps counters, leases, admission state and the ledger. Implementations: SQLite (the
 * embedded default), Redis and PostgreSQL. They hold no policy: the core decides, the store applies
 * atomically.
 *
 * <h2>Contract (checked by one test suite against every implementation)</h2>
 *
 * <ul>
 *   <li><b>Tokens</b> are strictly increasing per resource: {@link #acquire} takes {@code max(counter,
 *       floor) + 1} in the same atomic step that records the grant. A token is never reused, never
 *       goes backwards, never expires. Counters and highest-accepted tokens are never trimmed.
 *   <li><b>Generations</b>: when a store finds its data gone (no identity record) or possibly rolled
 *       back (Redis: the server's epoch changed; PostgreSQL: the cluster, the WAL timeline or the writer
 *       of the identity row changed), it creates a new identity with a fresh generation and key from the
 *       caller's candidate and a {@code floor} from the store's clock (never below the old floor), and
 *       every operation reports or uses the current one. Writes carry the generation they were decided
 *       under and are applied only while it is current.
 *   <li><b>Atomicity</b>: every method is one atomic step; a failed call ({@link
 *       StoreUnavailableException}) leaves no partial writes. Safe for many threads and, for SQLite,
 *       many processes at once.
 *   <li><b>Time</b> that decides anything shared (lease expiry, ledger times, retention, a new
 *       generation's floor) is the store's: a store with a clock of its own (Redis {@code TIME},
 *       PostgreSQL {@code clock_timestamp()}) uses it and takes the callers' {@code now} only when opened
 *       for a test clock; the embedded SQLite store, on the host its callers run on, takes {@code now}
 *       for leases and its engine's clock for retention. Leases are liveness, not safety: skew delays or
 *       hastens expiry but never admits a stale token.
 *   <li><b>Bounded waits</b>: every call returns or throws {@link StoreUnavailableException} within the
 *       timeout the store was opened with.
 * </ul>
 *
 * <p>Implementations are thread-safe.
 */
public interface LeaseStore extends AutoCloseable {

    /**
     * Returns the store's current identity, creating one from {@code candidate} if the store has none
     * (first use, or its data was lost).
     */
    StoreIdentity identity(StoreIdentity candidate);

    /**
     * For {@link #acquire}'s {@code ownToken}: the holder's own live lease is replaced whatever its token,
     * where a door has authenticated the holder (fence serve binds a credential to its holders).
     */
    long ANY_OWN_TOKEN = -1;

    /**
     * For {@link #acquire}'s {@code ownToken}: the holder's own live lease is busy as another holder's is,
     * where the caller showed no grant of it (in direct mode a holder's name is public).
     */
    long NO_OWN_TOKEN = 0;

    /**
     * As {@link #acquire(String, String, long, Instant, String, long, Supplier)} with {@link #ANY_OWN_TOKEN}.
     */
    default AcquireResult acquire(
            String resource, String holder, long ttlMillis, Instant now, String grantSha, StoreIdentity candidate) {
        java.util.Objects.requireNonNull(candidate, "candidate");
        return acquire(resource, holder, ttlMillis, now, grantSha, ANY_OWN_TOKEN, () -> candidate);
    }

    /**
     * As {@link #acquire(String, String, long, Instant, String, long, Supplier)} with {@link #ANY_OWN_TOKEN}.
     */
    default AcquireResult acquire(
            String resource,
            String holder,
            long ttlMillis,
            Instant now,
            String grantSha,
            Supplier<StoreIdentity> candidate) {
        return acquire(resource, holder, ttlMillis, now, grantSha, ANY_OWN_TOKEN, candidate);
    }

    /**
     * Grants {@code resource} to {@code holder} unless a live lease stands in the way: another holder's, or
     * the same holder's when {@code ownToken} does not let this grant replace it.
     *
     * <p>In one atomic step: if the latest lease is live ({@code !released && now < expiresAt}) and
     * belongs to another holder, or to this holder with a token other than {@code ownToken} (unless that
     * is {@link #ANY_OWN_TOKEN}), returns {@link AcquireResult.Busy} and writes nothing. Otherwise: if
     * the latest lease lapsed unreleased ({@code expiresAt <= now}) appends an {@link EventType#EXPIRE}
     * event for it (at its {@code expiresAt}); sets counter = {@code max(counter, floor) + 1}; records
     * the lease (holder, token, grantedAt = now, expiresAt = now + ttl, grantSha); increments the
     * version; appends a {@link EventType#GRANT} event. A live lease of the same holder that {@code
     * ownToken} allows is replaced by the new grant.
     *
     * <p>The candidate is asked for only when the store has no identity, so that the usual grant makes no
     * random numbers. This is the one implementations provide.
     *
     * @param ttlMillis lease length in milliseconds, positive
     * @param grantSha the remote tip recorded at grant for force-with-lease, or null
     * @param ownToken the token of the holder's own live lease that this grant may replace (the caller
     *     showed its grant), {@link #NO_OWN_TOKEN} for none, or {@link #ANY_OWN_TOKEN}
     * @param candidate identity to create if the store has none
     */
    AcquireResult acquire(
            String resource,
            String holder,
            long ttlMillis,
            Instant now,
            String grantSha,
            long ownToken,
            Supplier<StoreIdentity> candidate);

    /**
     * True when a live {@code lease} keeps {@code holder}'s acquire out (see {@link #acquire}'s {@code
     * ownToken}); for the Java implementations, so that they decide it alike.
     */
    static boolean blocks(Lease lease, String holder, long ownToken) {
        return !lease.holder().equals(holder) || (ownToken != ANY_OWN_TOKEN && lease.token() != ownToken);
    }

    /**
     * Extends the lease to {@code now + ttl} if {@code (holder, token)} is the current grant: the counter
     * equals {@code token}, the latest lease has that holder and token and is not released (an expired
     * lease that no one has superseded may be renewed). Otherwise {@link LeaseCheck.Refused}, nothing
     * written. Does not change the version. A lease that had lapsed ({@code expiresAt <= now}) is recorded
     * in the same atomic step as an {@link EventType#EXPIRE} event dated at its {@code expiresAt}, as
     * {@link #acquire} records one, followed by an {@link EventType#RENEW} event dated at {@code now} (the
     * store's clock, as {@link #acquire} dates its grant): the ledger shows the window in which anyone could
     * have taken the resource, and that the same grant holds it again from the renewal on. A renew of a live
     * lease appends nothing.
     */
    LeaseCheck renew(String resource, String holder, long token, long ttlMillis, Instant now);

    /**
     * Releases the lease under the same condition as {@link #renew}: marks it released with expiresAt =
     * now and appends a {@link EventType#RELEASE} event. Does not change the version.
     */
    LeaseCheck release(String resource, String holder, long token, Instant now);

    /**
     * Moves the recorded grant SHA (the lease's expected remote tip) from {@code expectedSha} to {@code
     * newSha}, only if {@code (holder, token)} is the current grant and the recorded value is still
     * {@code expectedSha}. Does not change the version.
     *
     * @return {@link LeaseCheck.Ok} with the updated lease, or {@link LeaseCheck.Refused}
     */
    LeaseCheck moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha);

    /** Reads the state of each resource in one consistent snapshot; unknown ones come back {@link ResourceState#empty}. */
    Map<String, ResourceState> snapshot(Collection<String> resources);

    /**
     * The store's own time now, where its lease times come from a clock of its own (Redis {@code TIME},
     * PostgreSQL's clock), so that a caller judges whether a lease is live by the clock that set its end;
     * empty for a store on its callers' clock (SQLite, or a store opened for a test clock).
     */
    default Optional<Instant> now() {
        return Optional.empty();
    }

    /**
     * The identity of {@code generation}, which a call such as {@link #acquire} just reported as current:
     * as {@link #identity}, but stores that keep the identity they last read answer without asking the
     * server again. An identity never changes within a generation.
     */
    default StoreIdentity identityOf(String generation, Supplier<StoreIdentity> candidate) {
        return identity(candidate.get());
    }

    /** The store's identity and a snapshot of resources, as {@link #identityAndSnapshot} reads them. */
    record IdentifiedSnapshot(StoreIdentity identity, Map<String, ResourceState> states) {}

    /**
     * {@link #identity} and {@link #snapshot} together, in one round trip (one transaction) where the store
     * allows: what a hook needs to judge a push. The candidate is asked for only when the store has no
     * identity, so the common path makes no random numbers.
     */
    default IdentifiedSnapshot identityAndSnapshot(Collection<String> resources, Supplier<StoreIdentity> candidate) {
        StoreIdentity identity = identity(candidate.get());
        return new IdentifiedSnapshot(identity, snapshot(resources));
    }

    /**
     * Applies every write and appends every event in one atomic step, if every write's {@code
     * expectedVersion} still matches; each applied write increments its resource's version. If any does
     * not match, writes nothing and returns {@link CommitResult.Conflict}. A write never lowers a counter
     * or a highest-accepted token: such a write is a bug and fails with {@link InternalException} before
     * anything is written.
     */
    CommitResult commit(List<ResourceWrite> writes, List<LedgerEvent> events);

    /**
     * The store's ledger retention: a setting of the store, the same for every client, kept with its
     * identity (and across generations). A store that has no setting yet takes the one its opener asked
     * for, else the default. A client whose URL asks for another value is refused ({@link
     * ConfigException}) by every call that appends to the ledger, so no client can shorten the shared
     * ledger through its URL.
     *
     * <p>With {@code newRetention} set, changes it first (an admin's act) and, in the same atomic step,
     * appends a {@link EventType#RETENTION} event ({@link LedgerEvent#retention}: the old and the new value
     * and {@code changedBy}) dated by the store's clock, then trims a batch of events past the new
     * retention counted back from that same instant: the event is the newest, so the change it records is
     * never trimmed by the call that makes it.
     *
     * @param newRetention the new retention, or null to only read it
     * @param changedBy who changes it (recorded as the event's pusher); ignored when only reading
     * @param now the caller's time, used only by a store opened for a test clock
     * @param candidate the identity to create if the store has none
     */
    Duration retention(Duration newRetention, String changedBy, Instant now, Supplier<StoreIdentity> candidate);

    /** The store's ledger retention, read only (see {@link #retention(Duration, String, Instant, Supplier)}). */
    default Duration retention(Supplier<StoreIdentity> candidate) {
        return retention(null, null, Instant.EPOCH, candidate);
    }

    /** Appends events (rejections, landings) atomically. */
    void append(List<LedgerEvent> events);

    /** Events matching {@code query}, oldest first (the newest {@code limit} when a limit is set). */
    List<LedgerEvent> query(LedgerQuery query);

    /** A short description for messages: scheme and location, never a password. */
    String describe();

    /** Releases connections; never throws. */
    @Override
    void close();
}
