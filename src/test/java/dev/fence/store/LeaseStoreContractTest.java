package dev.fence.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcceptedMark;
import dev.fence.core.AcquireResult;
import dev.fence.core.Actor;
import dev.fence.core.Admission;
import dev.fence.core.AdmissionService;
import dev.fence.core.CommitResult;
import dev.fence.core.ConfigException;
import dev.fence.core.EventType;
import dev.fence.core.FencePolicy;
import dev.fence.core.HostKind;
import dev.fence.core.Identities;
import dev.fence.core.InternalException;
import dev.fence.core.Landings;
import dev.fence.core.Lease;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.PushAttempt;
import dev.fence.core.PushOptions;
import dev.fence.core.Reason;
import dev.fence.core.RefUpdate;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.StoreIdentity;
import dev.fence.core.Tip;
import dev.fence.core.Verdict;
import dev.fence.testing.FakeClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The {@link LeaseStore} contract, run against every implementation by subclassing. A subclass opens
 * stores on fresh, private backing data for each test (a new file, a flushed Redis database) and may
 * support the optional hooks; tests that need an unsupported hook are skipped, not failed.
 *
 * <p>Time is explicit: every call gets its {@code now} from {@link #clock}, which only moves when a test
 * moves it. Tests are named after the store they run against ({@link StoreDisplayNames}).
 */
@DisplayNameGeneration(StoreDisplayNames.class)
public abstract class LeaseStoreContractTest {
    protected static final long TTL = 30_000;
    protected static final String MAIN = "git:project-42:refs/heads/main";
    protected static final String DEV = "git:project-42:refs/heads/dev";
    protected static final String OTHER_REPO = "git:owner/repo:refs/heads/main";
    protected static final String PLAIN = "db/migrations";
    protected static final String SHA_A = "a".repeat(40);
    protected static final String SHA_B = "b".repeat(40);
    protected static final String SHA_C = "c".repeat(40);

    protected final FakeClock clock = new FakeClock(Instant.parse("2030-01-01T00:00:00Z"));
    private final List<LeaseStore> opened = new ArrayList<>();

    /** Opened with {@link StoreOptions#defaults()} before each test. */
    protected LeaseStore store;

    /** The candidate every call of a test passes, unless the test is about identities. */
    protected StoreIdentity candidate;

    /**
     * Opens a store on this test's backing data. Called once before each test and again whenever a test
     * wants a second instance (another "process") or a reopened one; every instance of one test must see
     * the same data. The base class closes every store it opened.
     */
    protected abstract LeaseStore openStore(StoreOptions options);

    /**
     * Destroys all data under the open stores, as a Redis restart without persistence or a deleted SQLite
     * file would, leaving them usable. Unsupported unless overridden: tests using it are skipped.
     */
    protected void loseAllData() throws Exception {
        Assumptions.abort("this store cannot simulate losing its data");
    }

    /**
     * Forgets one resource's state behind the store's back, the generation left as it is: what an evicted
     * Redis key, an older snapshot loaded in place, or a lost log of acknowledged commits does. Unsupported
     * unless overridden: tests using it are skipped.
     */
    protected void forgetResource(String resource) throws Exception {
        Assumptions.abort("this store cannot simulate forgetting one resource");
    }

    /**
     * Restarts the backend under the open stores (a redis-server restarted with its persistence), which
     * must keep all data; the stores must carry on without being reopened. Unsupported unless
     * overridden: tests using it are skipped.
     */
    protected void restartBackend() throws Exception {
        Assumptions.abort("this store has no backend to restart");
    }

    /**
     * True for a store that takes a new identity's floor and creation time from its own clock, never from
     * the candidate (PostgreSQL, so that a caller's slow clock cannot lower the floor): its identities keep
     * only the candidate's generation and key.
     */
    protected boolean floorsFromOwnClock() {
        return false;
    }

    /**
     * True for a store whose writes skip looking for events past retention for a second after a look found
     * no backlog ({@link PrunePacing}: the SQL stores).
     */
    protected boolean pacesPruning() {
        return false;
    }

    /** Asserts that {@code actual} is the identity the store made from {@code candidate}. */
    protected final void assertMadeFrom(StoreIdentity candidate, StoreIdentity actual) {
        if (!floorsFromOwnClock()) {
            assertEquals(candidate, actual);
            return;
        }
        assertEquals(candidate.generation(), actual.generation());
        assertArrayEquals(candidate.proofKey(), actual.proofKey());
        assertTrue(actual.floor() > 0, () -> "floor of " + actual);
    }

    /** The floor of the store's identity (made from {@link #candidate} if it has none). */
    protected final long floor() {
        return store.identity(candidate).floor();
    }

    /**
     * The token of a grant at {@code at} of a resource whose latest token is {@code previous}: above it, the
     * floor, and the grant's time in microseconds ({@link StoreIdentity#nextToken}).
     */
    protected final long next(long previous, Instant at) {
        long token = store.identity(candidate).nextToken(previous, at.toEpochMilli());
        assertTrue(token > previous);
        return token;
    }

    @BeforeEach
    void openDefaultStore() {
        candidate = Identities.candidate(clock.instant());
        store = open(StoreOptions.defaults());
    }

    @AfterEach
    void closeStores() {
        opened.forEach(LeaseStore::close);
    }

    /** Opens another store on this test's data; closed after the test. */
    protected final LeaseStore open(StoreOptions options) {
        LeaseStore s = openStore(options);
        opened.add(s);
        return s;
    }

    protected final AcquireResult acquire(String resource, String holder) {
        return store.acquire(resource, holder, TTL, clock.instant(), null, candidate);
    }

    protected final AcquireResult.Granted grant(String resource, String holder) {
        return assertInstanceOf(AcquireResult.Granted.class, acquire(resource, holder));
    }

    protected final ResourceState state(String resource) {
        return store.snapshot(List.of(resource)).get(resource);
    }

    protected final List<LedgerEvent> ledger(String resource) {
        return store.query(LedgerQuery.forResource(resource));
    }

    protected static LedgerEvent event(
            Instant at, EventType type, String resource, String holder, long token, String reason) {
        LedgerEvent e = LedgerEvent.lease(at, type, resource, holder, token);
        return new LedgerEvent(
                0,
                e.at(),
                e.type(),
                e.resource(),
                e.repo(),
                e.ref(),
                e.holder(),
                "pusher-" + holder,
                token,
                SHA_A,
                SHA_B,
                reason,
                "note about " + resource);
    }

    private ResourceWrite write(ResourceState s, long latestGranted, long highestAccepted, Tip tip) {
        return new ResourceWrite(
                s.resource(),
                s.version(),
                latestGranted,
                highestAccepted,
                false,
                s.baseToken(),
                s.baseSha(),
                s.lastTokenWriteSha(),
                tip,
                store.identity(candidate).generation());
    }

    /** The write of an accepted push under grant {@code g} to the resource in state {@code s}: SHA_A to SHA_B. */
    protected final ResourceWrite acceptedWrite(ResourceState s, AcquireResult.Granted g, Tip tip) {
        return new ResourceWrite(
                s.resource(),
                s.version(),
                g.token(),
                g.token(),
                false,
                g.token(),
                SHA_A,
                SHA_B,
                tip,
                store.identity(candidate).generation());
    }

    private static void assertEvent(LedgerEvent e, EventType type, String holder, long token) {
        assertEquals(type, e.type(), () -> "event " + e);
        assertEquals(holder, e.holder(), () -> "event " + e);
        assertEquals(token, e.token(), () -> "event " + e);
    }

    private static List<EventType> types(List<LedgerEvent> events) {
        return events.stream().map(LedgerEvent::type).toList();
    }

    @Nested
    class Tokens {
        @Test
        void firstGrantIsAboveTheFloorAndItsTimeUnderTheCandidateGeneration() {
            AcquireResult.Granted g = grant(MAIN, "alice");

            assertEquals(next(0, g.grantedAt()), g.token());
            assertTrue(g.token() > floor());
            assertEquals(candidate.generation(), g.generation());
            assertEquals(MAIN, g.resource());
            assertEquals("alice", g.holder());
            assertEquals(clock.instant(), g.grantedAt());
            assertEquals(clock.instant().plusMillis(TTL), g.expiresAt());
            assertNull(g.previous());
            assertNull(g.tip());
        }

        @Test
        void strictlyIncreaseOverAThousandGrantsWithExpiriesReleasesAndRegrants() {
            long last = floor();
            Set<Long> seen = new HashSet<>();
            String holder = "agent-0";
            long grantToken = 0;
            int expiries = 0;
            for (int i = 0; i < 1000; i++) {
                switch (i % 4) {
                    case 0 -> { // the lease lapses; another holder takes over
                        clock.advance(Duration.ofMillis(TTL + 1));
                        holder = "agent-" + (i % 7);
                        expiries += i == 0 ? 0 : 1;
                    }
                    case 1 -> { // released, then someone else
                        assertInstanceOf(LeaseCheck.Ok.class, store.release(MAIN, holder, grantToken, clock.instant()));
                        holder = "agent-" + (i % 5);
                    }
                    case 2 -> clock.advance(Duration.ofSeconds(1)); // same holder, lease still live
                    default -> { // lapses exactly at expiresAt; the same holder comes back
                        clock.advance(Duration.ofMillis(TTL));
                        expiries++;
                    }
                }
                AcquireResult.Granted g = grant(MAIN, holder);
                assertTrue(g.token() > last, () -> "token " + g.token() + " after " + seen.size() + " grants");
                assertTrue(seen.add(g.token()));
                last = g.token();
                grantToken = g.token();
            }

            assertEquals(last, state(MAIN).latestGranted());
            assertEquals(1000, state(MAIN).version());
            List<LedgerEvent> events = ledger(MAIN);
            List<Long> granted = events.stream()
                    .filter(e -> e.type() == EventType.GRANT)
                    .map(LedgerEvent::token)
                    .toList();
            assertEquals(1000, granted.size());
            for (int i = 1; i < granted.size(); i++) {
                assertTrue(granted.get(i) > granted.get(i - 1));
            }
            assertEquals(
                    expiries,
                    events.stream().filter(e -> e.type() == EventType.EXPIRE).count());
        }

        @Test
        void countersArePerResource() {
            Instant first = clock.instant();
            long main1 = grant(MAIN, "alice").token();
            long dev1 = grant(DEV, "alice").token();
            clock.advance(Duration.ofMillis(TTL));
            long main2 = grant(MAIN, "bob").token();

            assertEquals(next(0, first), main1);
            assertEquals(next(0, first), dev1);
            assertEquals(next(main1, clock.instant()), main2);
        }
    }

    @Nested
    class Acquire {
        @Test
        void busyWhileAnotherHoldersLeaseIsLiveAndWritesNothing() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            ResourceState before = state(MAIN);
            List<LedgerEvent> ledgerBefore = store.query(LedgerQuery.all());
            clock.advance(Duration.ofMillis(TTL - 1));

            AcquireResult r = acquire(MAIN, "bob");

            assertEquals(new AcquireResult.Busy(MAIN, "alice", g.token(), g.expiresAt()), r);
            assertEquals(before, state(MAIN));
            assertEquals(ledgerBefore, store.query(LedgerQuery.all()));
        }

        @Test
        void sameHolderReacquiringGetsAHigherTokenAndReplacesItsLease() {
            AcquireResult.Granted first = grant(MAIN, "alice");
            clock.advance(Duration.ofSeconds(5));

            AcquireResult.Granted second = grant(MAIN, "alice");

            assertTrue(second.token() > first.token());
            assertEquals(
                    new Lease("alice", first.token(), first.grantedAt(), first.expiresAt(), false, null),
                    second.previous());
            assertEquals(second.token(), state(MAIN).lease().token());
            assertEquals(List.of(EventType.GRANT, EventType.GRANT), types(ledger(MAIN)));
            // The replaced token is no longer current.
            assertInstanceOf(LeaseCheck.Refused.class, store.renew(MAIN, "alice", first.token(), TTL, clock.instant()));
        }

        /**
         * Direct mode's acquire passes the token of the grant the caller showed: a holder's own live lease is
         * replaced only under that token, so naming a holder does not take its lease.
         */
        @Test
        void sameHoldersLiveLeaseIsReplacedOnlyUnderTheTokenShown() {
            AcquireResult.Granted first = grant(MAIN, "alice");
            ResourceState before = state(MAIN);
            List<LedgerEvent> ledgerBefore = store.query(LedgerQuery.all());
            clock.advance(Duration.ofSeconds(5));

            for (long shown : new long[] {LeaseStore.NO_OWN_TOKEN, first.token() - 1, first.token() + 1}) {
                AcquireResult r = store.acquire(MAIN, "alice", TTL, clock.instant(), null, shown, () -> candidate);
                assertEquals(
                        new AcquireResult.Busy(MAIN, "alice", first.token(), first.expiresAt()), r, "shown " + shown);
            }
            assertEquals(before, state(MAIN), "a busy acquire writes nothing");
            assertEquals(ledgerBefore, store.query(LedgerQuery.all()));

            AcquireResult.Granted second = assertInstanceOf(
                    AcquireResult.Granted.class,
                    store.acquire(MAIN, "alice", TTL, clock.instant(), null, first.token(), () -> candidate));
            assertTrue(second.token() > first.token());
            assertEquals("alice", second.previous().holder());
            assertEquals(first.token(), second.previous().token());
            // Another holder is busy whatever token it shows: the token only ever stands for the own lease.
            assertInstanceOf(
                    AcquireResult.Busy.class,
                    store.acquire(MAIN, "bob", TTL, clock.instant(), null, second.token(), () -> candidate));
        }

        @Test
        void noTokenIsNeededOnceTheHoldersOwnLeaseIsNotLive() {
            AcquireResult.Granted first = grant(MAIN, "alice");
            clock.set(first.expiresAt());
            AcquireResult.Granted lapsed = assertInstanceOf(
                    AcquireResult.Granted.class,
                    store.acquire(MAIN, "alice", TTL, clock.instant(), null, LeaseStore.NO_OWN_TOKEN, () -> candidate));
            assertInstanceOf(LeaseCheck.Ok.class, store.release(MAIN, "alice", lapsed.token(), clock.instant()));
            assertInstanceOf(
                    AcquireResult.Granted.class,
                    store.acquire(MAIN, "alice", TTL, clock.instant(), null, LeaseStore.NO_OWN_TOKEN, () -> candidate));
        }

        @Test
        void afterExpiryAnotherHolderGetsItAndTheExpiryPrecedesTheGrant() {
            AcquireResult.Granted alice = grant(MAIN, "alice");
            clock.set(alice.expiresAt()); // expiresAt <= now: lapsed

            AcquireResult.Granted bob = grant(MAIN, "bob");

            assertTrue(bob.token() > alice.token());
            assertEquals("alice", bob.previous().holder());
            List<LedgerEvent> events = ledger(MAIN);
            assertEquals(3, events.size(), events::toString);
            assertEvent(events.get(0), EventType.GRANT, "alice", alice.token());
            assertEvent(events.get(1), EventType.EXPIRE, "alice", alice.token());
            assertEquals(alice.expiresAt(), events.get(1).at());
            assertEvent(events.get(2), EventType.GRANT, "bob", bob.token());
            assertEquals("project-42", events.get(2).repo());
            assertEquals("refs/heads/main", events.get(2).ref());
            assertTrue(events.get(0).seq() < events.get(1).seq()
                    && events.get(1).seq() < events.get(2).seq());
        }

        @Test
        void afterAReleaseAnotherHolderGetsItWithoutAnExpiry() {
            AcquireResult.Granted alice = grant(MAIN, "alice");
            store.release(MAIN, "alice", alice.token(), clock.instant());

            AcquireResult.Granted bob = grant(MAIN, "bob");

            assertTrue(bob.previous().released());
            assertEquals(List.of(EventType.GRANT, EventType.RELEASE, EventType.GRANT), types(ledger(MAIN)));
        }

        @Test
        void recordsTheGrantShaAndReturnsTheLastTip() {
            ResourceState empty = state(MAIN);
            Tip tip = new Tip(SHA_A, 0, null, "ci-bot", clock.instant());
            store.commit(List.of(write(empty, 0, 0, tip)), List.of());

            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "alice", TTL, clock.instant(), SHA_A, candidate));

            assertEquals(tip, g.tip());
            assertEquals(SHA_A, state(MAIN).lease().grantSha());
            assertEquals(2, state(MAIN).version());
        }
    }

    @Nested
    class RenewAndRelease {
        @Test
        void renewExtendsOnlyTheCurrentHoldersCurrentToken() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            clock.advance(Duration.ofSeconds(10));

            LeaseCheck ok = store.renew(MAIN, "alice", g.token(), 60_000, clock.instant());
            LeaseCheck wrongHolder = store.renew(MAIN, "bob", g.token(), TTL, clock.instant());
            LeaseCheck wrongToken = store.renew(MAIN, "alice", g.token() - 1, TTL, clock.instant());
            LeaseCheck unknown = store.renew(PLAIN, "alice", g.token(), TTL, clock.instant());

            Lease renewed =
                    new Lease("alice", g.token(), g.grantedAt(), clock.instant().plusMillis(60_000), false, null);
            assertEquals(new LeaseCheck.Ok(renewed), ok);
            assertEquals(new LeaseCheck.Refused(g.token(), renewed), wrongHolder);
            assertEquals(new LeaseCheck.Refused(g.token(), renewed), wrongToken);
            assertEquals(new LeaseCheck.Refused(0, null), unknown);
            assertEquals(renewed, state(MAIN).lease());
            assertEquals(1, state(MAIN).version());
            assertEquals(List.of(EventType.GRANT), types(ledger(MAIN)));
        }

        @Test
        void renewOfAnExpiredLeaseNoOneSupersededWorks() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            clock.advance(Duration.ofMillis(3 * TTL));

            assertInstanceOf(LeaseCheck.Ok.class, store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));

            assertInstanceOf(AcquireResult.Busy.class, acquire(MAIN, "bob"));
        }

        @Test
        void aRenewAfterALapseRecordsTheLapseAtItsExpiryAndTheRenewalInTheSameStep() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            clock.advance(Duration.ofMillis(TTL + 2_000));
            Instant renewal = clock.instant();

            assertInstanceOf(LeaseCheck.Ok.class, store.renew(MAIN, "alice", g.token(), TTL, renewal));
            // Live again: a second renew and the next holder's refused acquire record no other lapse.
            clock.advance(Duration.ofMillis(1_000));
            assertInstanceOf(LeaseCheck.Ok.class, store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));
            assertInstanceOf(AcquireResult.Busy.class, acquire(MAIN, "bob"));

            List<LedgerEvent> events = ledger(MAIN);
            assertEquals(List.of(EventType.GRANT, EventType.EXPIRE, EventType.RENEW), types(events));
            assertEvent(events.get(1), EventType.EXPIRE, "alice", g.token());
            assertEquals(g.expiresAt(), events.get(1).at(), "dated at the lapse, not at the renew");
            assertEquals("project-42", events.get(1).repo());
            assertEquals("refs/heads/main", events.get(1).ref());
            // Without the renewal the audit would draw the lease lapsed from its expiry on.
            assertEvent(events.get(2), EventType.RENEW, "alice", g.token());
            assertEquals(renewal, events.get(2).at(), "dated at the renewal");
            assertEquals("project-42", events.get(2).repo());
            assertEquals("refs/heads/main", events.get(2).ref());
            assertTrue(events.get(1).seq() < events.get(2).seq(), "the lapse is appended before the renewal");
            assertEquals(1, state(MAIN).version());
        }

        @Test
        void aRenewAtTheInstantOfExpiryRecordsTheLapseAndTheRenewal() {
            AcquireResult.Granted g = grant(PLAIN, "alice");
            clock.set(g.expiresAt()); // expiresAt <= now: lapsed, as acquire judges it

            assertInstanceOf(LeaseCheck.Ok.class, store.renew(PLAIN, "alice", g.token(), TTL, clock.instant()));

            List<LedgerEvent> events = ledger(PLAIN);
            assertEquals(List.of(EventType.GRANT, EventType.EXPIRE, EventType.RENEW), types(events));
            assertEquals(g.expiresAt(), events.get(2).at());
            assertTrue(events.get(1).seq() < events.get(2).seq(), "the lapse comes first at the same instant");
        }

        @Test
        void aSuccessorsGrantRefusesTheOldHoldersRenewAndRelease() {
            AcquireResult.Granted alice = grant(MAIN, "alice");
            clock.advance(Duration.ofMillis(TTL + 1));
            AcquireResult.Granted bob = grant(MAIN, "bob");
            Lease bobs = state(MAIN).lease();

            LeaseCheck renew = store.renew(MAIN, "alice", alice.token(), TTL, clock.instant());
            LeaseCheck release = store.release(MAIN, "alice", alice.token(), clock.instant());

            assertEquals(new LeaseCheck.Refused(bob.token(), bobs), renew);
            assertEquals(new LeaseCheck.Refused(bob.token(), bobs), release);
            assertEquals(bobs, state(MAIN).lease());
        }

        @Test
        void releaseMarksTheLeaseReleasedAppendsAReleaseAndKeepsTheVersion() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            clock.advance(Duration.ofSeconds(5));

            LeaseCheck r = store.release(MAIN, "alice", g.token(), clock.instant());

            Lease released = new Lease("alice", g.token(), g.grantedAt(), clock.instant(), true, null);
            assertEquals(new LeaseCheck.Ok(released), r);
            assertEquals(released, state(MAIN).lease());
            assertEquals(1, state(MAIN).version());
            List<LedgerEvent> events = ledger(MAIN);
            assertEquals(List.of(EventType.GRANT, EventType.RELEASE), types(events));
            assertEvent(events.get(1), EventType.RELEASE, "alice", g.token());
            assertEquals(clock.instant(), events.get(1).at());
        }

        @Test
        void aReleasedLeaseCanBeNeitherRenewedNorReleasedAgain() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            store.release(MAIN, "alice", g.token(), clock.instant());

            assertInstanceOf(LeaseCheck.Refused.class, store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));
            assertInstanceOf(LeaseCheck.Refused.class, store.release(MAIN, "alice", g.token(), clock.instant()));
            assertEquals(2, ledger(MAIN).size());
        }

        @Test
        void aBumpSupersedesTheLease() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            ResourceState s = state(MAIN);
            ResourceWrite bump = new ResourceWrite(
                    MAIN,
                    s.version(),
                    g.token() + 1,
                    0,
                    true,
                    g.token() + 1,
                    SHA_A,
                    null,
                    null,
                    store.identity(candidate).generation());
            assertEquals(new CommitResult.Committed(), store.commit(List.of(bump), List.of()));

            assertNull(state(MAIN).lease());
            assertEquals(
                    new LeaseCheck.Refused(g.token() + 1, null),
                    store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));
            assertEquals(g.token() + 2, grant(MAIN, "bob").token());
        }
    }

    /** {@link Landings}: a decision supersedes and counts only once its update lands. */
    @Nested
    class Landing {
        private final RefUpdate update = new RefUpdate(SHA_A, SHA_B, "refs/heads/main");

        private Verdict admitTokenless(String pusher) {
            PushAttempt push = new PushAttempt(
                    "project-42", new Actor(pusher, HostKind.PLAIN, null), PushOptions.none(), List.of(update));
            return new AdmissionService(store, FencePolicy.defaults(), clock)
                    .admit(push, (a, d) -> true, Map.of(), null, true);
        }

        private Landings.Pending pending(Reason reason, long token, String holder) {
            return new Landings.Pending(reason, MAIN, "project-42", update, token, holder, "carol", clock.instant());
        }

        @Test
        void anAdmittedTokenlessPushSupersedesNothingUntilItLands() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            ResourceState before = state(MAIN);

            Verdict v = admitTokenless("carol");

            assertTrue(v.accepted(), v.toString());
            assertTrue(
                    v.warnings().stream()
                            .anyMatch(w -> w.contains("supersedes alice's lease on refs/heads/main when it lands")),
                    v.warnings().toString());
            ResourceState decided = state(MAIN);
            assertEquals(before.lease(), decided.lease(), "the lease stands");
            assertEquals(g.token(), decided.latestGranted());
            assertEquals(before.tip(), decided.tip(), "not the last write yet");
            assertInstanceOf(LeaseCheck.Ok.class, store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));

            Landings.Landed landed = Landings.land(
                    store, List.of(pending(Reason.BUMPED, 0, null)), (a, d) -> true, clock.instant(), () -> candidate);

            ResourceState after = state(MAIN);
            assertNull(after.lease(), "landing superseded the lease");
            assertTrue(after.latestGranted() > g.token());
            assertEquals(SHA_B, after.tip().sha());
            assertEquals("carol", after.tip().pusher());
            assertEquals(List.of(new AcceptedMark(MAIN, after.latestGranted(), null)), landed.marks());
            assertEquals(
                    List.of("fence: this push superseded alice's lease on refs/heads/main (token " + g.token()
                            + " is now stale)"),
                    landed.lines());
            assertInstanceOf(LeaseCheck.Refused.class, store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));
            LedgerEvent last = ledger(MAIN).get(ledger(MAIN).size() - 1);
            assertEquals(EventType.LANDED, last.type());
            assertEquals(after.latestGranted(), last.token());
        }

        @Test
        void anUnlandedAdmissionIsMarkedAndChangesNothingElse() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            admitTokenless("carol");
            ResourceState decided = state(MAIN);

            Landings.unlanded(store, List.of(pending(Reason.BUMPED, 0, null)), clock.instant());

            assertEquals(decided, state(MAIN), "no lease, counter or tip changed");
            List<LedgerEvent> unlanded =
                    store.query(new LedgerQuery(MAIN, null, null, null, null, Set.of(EventType.UNLANDED), 0));
            assertEquals(1, unlanded.size());
            assertEquals("carol", unlanded.get(0).pusher());
            assertEquals(SHA_B, unlanded.get(0).newSha());
            assertEquals("bumped", unlanded.get(0).reason());
            assertInstanceOf(LeaseCheck.Ok.class, store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));
        }

        @Test
        void aLandedTokenPushBecomesTheLastWriteUnderItsToken() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            Landings.land(
                    store,
                    List.of(pending(Reason.ACCEPTED, g.token(), "alice")),
                    (a, d) -> true,
                    clock.instant(),
                    () -> candidate);
            ResourceState after = state(MAIN);
            assertEquals(new Tip(SHA_B, g.token(), "alice", "carol", clock.instant()), after.tip());
            assertEquals(SHA_B, after.lastTokenWriteSha());
            assertNotNull(after.lease(), "a token push supersedes nothing");
            assertEquals(g.token(), after.latestGranted());
        }

        @Test
        void aTokenPushFoundLandedPastItsTipDoesNotRewindALaterLastWrite() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            // alice's later write (to C, which contains B) landed and was recorded first.
            Landings.Pending later = new Landings.Pending(
                    Reason.ACCEPTED,
                    MAIN,
                    "project-42",
                    new RefUpdate(SHA_B, SHA_C, "refs/heads/main"),
                    g.token(),
                    "alice",
                    "carol",
                    clock.instant());
            Landings.land(store, List.of(later), (a, d) -> true, clock.instant(), () -> candidate);
            // The earlier one (to B) is then found landed because the ref is past it.
            Landings.Pending earlier = pending(Reason.ACCEPTED, g.token(), "alice");
            Landings.land(
                    store,
                    List.of(earlier),
                    List.of(earlier),
                    (a, d) -> a.equals(SHA_B) && d.equals(SHA_C),
                    clock.instant(),
                    () -> candidate);
            ResourceState after = state(MAIN);
            assertEquals(SHA_C, after.lastTokenWriteSha(), "the record keeps the later write");
            assertEquals(SHA_C, after.tip().sha());
            List<LedgerEvent> landed =
                    store.query(new LedgerQuery(MAIN, null, null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(
                    List.of(SHA_C, SHA_B),
                    landed.stream().map(LedgerEvent::newSha).toList());
        }

        /** A landing of two branches in one push: a bump of main, and dev written under a token. */
        private List<Landings.Pending> twoBranches(long devToken) {
            return List.of(
                    pending(Reason.BUMPED, 0, null),
                    new Landings.Pending(
                            Reason.ACCEPTED,
                            DEV,
                            "project-42",
                            new RefUpdate(SHA_A, SHA_C, "refs/heads/dev"),
                            devToken,
                            "dora",
                            "carol",
                            clock.instant()));
        }

        @Test
        void theBranchesOfOnePushLandTogetherAsEachWouldAlone() {
            AcquireResult.Granted alice = grant(MAIN, "alice");
            AcquireResult.Granted dora = grant(DEV, "dora");

            Landings.Landed landed =
                    Landings.land(store, twoBranches(dora.token()), (a, d) -> true, clock.instant(), () -> candidate);

            ResourceState main = state(MAIN);
            assertNull(main.lease(), "the bump superseded alice");
            assertTrue(main.latestGranted() > alice.token());
            assertEquals(SHA_B, main.tip().sha());
            ResourceState dev = state(DEV);
            assertEquals(new Tip(SHA_C, dora.token(), "dora", "carol", clock.instant()), dev.tip());
            assertEquals(SHA_C, dev.lastTokenWriteSha());
            assertNotNull(dev.lease(), "a token push supersedes nothing");
            assertEquals(List.of(new AcceptedMark(MAIN, main.latestGranted(), null)), landed.marks());
            assertEquals(1, landed.lines().size(), landed.lines().toString());
            List<LedgerEvent> events =
                    store.query(new LedgerQuery(null, "project-42", null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(
                    List.of(MAIN, DEV),
                    events.stream().map(LedgerEvent::resource).toList());
            assertEquals(
                    List.of(main.latestGranted(), dora.token()),
                    events.stream().map(LedgerEvent::token).toList());
        }

        @Test
        void aGrantBetweenTheSnapshotAndTheCommitOfLandingsTogetherIsLandedOverOneAtATime() {
            grant(MAIN, "alice");
            AcquireResult.Granted dora = grant(DEV, "dora");
            // Another process grants main to bob after the landing read both branches and before it wrote them.
            AcquireResult.Granted[] bob = new AcquireResult.Granted[1];
            LeaseStore racing = (LeaseStore) java.lang.reflect.Proxy.newProxyInstance(
                    LeaseStore.class.getClassLoader(), new Class<?>[] {LeaseStore.class}, (proxy, method, args) -> {
                        if (method.getName().equals("commit") && ((List<?>) args[0]).size() > 1 && bob[0] == null) {
                            clock.advance(Duration.ofMillis(TTL + 1));
                            bob[0] = grant(MAIN, "bob");
                        }
                        try {
                            return method.invoke(store, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });

            Landings.land(racing, twoBranches(dora.token()), (a, d) -> true, clock.instant(), () -> candidate);

            assertNotNull(bob[0], "the landing wrote both branches in one commit first");
            ResourceState main = state(MAIN);
            assertTrue(
                    main.latestGranted() > bob[0].token(), "landed again from a fresh read: bob's grant is superseded");
            assertInstanceOf(LeaseCheck.Refused.class, store.renew(MAIN, "bob", bob[0].token(), TTL, clock.instant()));
            assertEquals(SHA_C, state(DEV).tip().sha());
            List<LedgerEvent> events =
                    store.query(new LedgerQuery(null, "project-42", null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(
                    List.of(MAIN, DEV),
                    events.stream().map(LedgerEvent::resource).toList(),
                    "each once");
        }

        @Test
        void aPushOfManyBranchesLandsInCommitsTheStoreFinishesInTime() {
            // A commit's time on the store grows with its writes: past some size it outlasts the store's
            // timeout (Redis: "ran the commit only after this call's time had run out", or the reply's read
            // timing out after the script wrote everything; PostgreSQL: the socket's timeout) and fails with
            // StoreUnavailableException, which is not a conflict: there is no fallback. A push of many
            // branches (or the backlog of several) must not ride on one such commit: this store cannot
            // finish a commit of more than 1,000 landings in time.
            int branches = 2_500;
            List<Landings.Pending> landings = new ArrayList<>();
            for (int i = 0; i < branches; i++) {
                String ref = "refs/heads/b" + i;
                landings.add(new Landings.Pending(
                        Reason.BUMPED,
                        dev.fence.core.Resources.forRef("project-42", ref),
                        "project-42",
                        new RefUpdate(SHA_A, SHA_B, ref),
                        0,
                        null,
                        "carol",
                        clock.instant()));
            }
            LeaseStore bounded = (LeaseStore) java.lang.reflect.Proxy.newProxyInstance(
                    LeaseStore.class.getClassLoader(), new Class<?>[] {LeaseStore.class}, (proxy, method, args) -> {
                        if (method.getName().equals("commit") && ((List<?>) args[0]).size() > 1_000) {
                            throw new dev.fence.core.StoreUnavailableException(
                                    "the commit ran past the store's timeout; nothing was written");
                        }
                        try {
                            return method.invoke(store, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });

            Landings.Landed landed = Landings.land(bounded, landings, (a, d) -> true, clock.instant(), () -> candidate);

            assertEquals(branches, landed.marks().size());
            List<LedgerEvent> events =
                    store.query(new LedgerQuery(null, "project-42", null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(
                    landings.stream().map(Landings.Pending::resource).toList(),
                    events.stream().map(LedgerEvent::resource).toList(),
                    "each once, in order");
            assertEquals(
                    SHA_B, state(landings.get(branches - 1).resource()).tip().sha());
        }

        /** The landing of {@link #twoBranches} over alice's lease on main and under dora's token on dev. */
        private List<Landings.Pending> mainAndDevLanding;

        /** Lands main and dev once ({@link #mainAndDevLanding}); the clock then moves on a second. */
        private Landings.Landed landMainAndDev() {
            grant(MAIN, "alice");
            mainAndDevLanding = twoBranches(grant(DEV, "dora").token());
            Landings.Landed first = landMainAndDevAgain();
            clock.advance(Duration.ofSeconds(1));
            return first;
        }

        /** The same landing as {@link #landMainAndDev}'s, once more (its caller kept it pending). */
        private Landings.Landed landMainAndDevAgain() {
            return Landings.land(store, mainAndDevLanding, (a, d) -> true, clock.instant(), () -> candidate);
        }

        /**
         * The store applied a landing's commit but its caller saw a failure (a reply lost), so the landing
         * stayed pending and comes again: it supersedes nothing more (bob's lease, granted in between, stands)
         * and the ledger says once that each branch landed.
         */
        @Test
        void aLandingThatComesAgainAfterItsCommitWasAppliedChangesNothing() {
            Landings.Landed first = landMainAndDev();
            AcquireResult.Granted bob = grant(MAIN, "bob");
            ResourceState main = state(MAIN);
            ResourceState dev = state(DEV);

            Landings.Landed again = landMainAndDevAgain();

            assertEquals(main, state(MAIN), "bob's lease and main's counter stand");
            assertEquals(dev, state(DEV));
            assertInstanceOf(LeaseCheck.Ok.class, store.renew(MAIN, "bob", bob.token(), TTL, clock.instant()));
            List<LedgerEvent> landed =
                    store.query(new LedgerQuery(null, "project-42", null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(
                    List.of(MAIN, DEV),
                    landed.stream().map(LedgerEvent::resource).toList());
            assertEquals(List.of(), again.lines(), "nothing superseded this time");
            assertEquals(1, first.marks().size());
            assertEquals(
                    List.of(),
                    again.marks(),
                    "the bump's token is no longer the counter (bob's grant is): no mark rather than bob's number");
        }

        /**
         * A bump's landing that comes again after bob was granted main reports the bump's own token for the
         * repository's record, not bob's: a holderless mark at bob's token would make the hook refuse bob's
         * push under it as a token "granted twice after losing data" (DUPLICATE_TOKEN).
         */
        @Test
        void aBumpLandingThatComesAgainReportsTheBumpsTokenNotALaterGrants() {
            landMainAndDev();
            AcquireResult.Granted bob = grant(MAIN, "bob");

            Landings.Landed again = landMainAndDevAgain();

            for (AcceptedMark m : again.marks()) {
                assertTrue(m.token() < bob.token(), "a holderless mark at or above bob's grant: " + m);
            }
            // What the hook's record then does to bob's push under his own token.
            Map<String, AcceptedMark> record = new java.util.HashMap<>();
            for (AcceptedMark m : again.marks()) {
                record.put(m.resource(), m);
            }
            String proof = dev.fence.core.Proofs.standard().issue(store.identity(candidate), MAIN, bob.token(), "bob");
            PushAttempt bobs = new PushAttempt(
                    "project-42",
                    new Actor("bob", HostKind.PLAIN, null),
                    new PushOptions(java.util.OptionalLong.of(bob.token()), proof, List.of()),
                    List.of(new RefUpdate(SHA_B, SHA_C, "refs/heads/main")));
            Verdict v = new AdmissionService(store, FencePolicy.defaults(), clock)
                    .admit(bobs, (a, d) -> true, record, null, true);
            assertTrue(v.accepted(), v.toString());
        }

        @Test
        void aBumpLandingThatComesAgainWithNoGrantSinceReportsTheSameMark() {
            Landings.Landed first = landMainAndDev();

            Landings.Landed again = landMainAndDevAgain();

            assertEquals(first.marks(), again.marks());
        }

        @Test
        void aBumpThatLandsAfterANewerGrantSupersedesThatGrant() {
            grant(MAIN, "alice");
            admitTokenless("carol");
            clock.advance(Duration.ofMillis(TTL + 1));
            AcquireResult.Granted bob = grant(MAIN, "bob");

            Landings.land(
                    store, List.of(pending(Reason.BUMPED, 0, null)), (a, d) -> true, clock.instant(), () -> candidate);

            assertTrue(state(MAIN).latestGranted() > bob.token());
            assertInstanceOf(LeaseCheck.Refused.class, store.renew(MAIN, "bob", bob.token(), TTL, clock.instant()));
        }

        private PushAttempt tokenless(String pusher) {
            return new PushAttempt(
                    "project-42", new Actor(pusher, HostKind.PLAIN, null), PushOptions.none(), List.of(update));
        }

        /** fence serve, GitLab and GHES: the decision took effect when it was made; its landing says which. */
        @Test
        void aLandingOfADecisionAppliedWhenMadeRecordsItsReasonTokenAndHolder() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            Verdict v = new AdmissionService(store, FencePolicy.defaults(), clock)
                    .admit(tokenless("carol"), (a, d) -> true, Map.of(), null, false);
            assertTrue(v.accepted(), v.toString());
            ResourceState decided = state(MAIN);
            assertTrue(decided.latestGranted() > g.token(), "the bump took effect at the decision");

            Landings.landedAsDecided(store, tokenless("carol"), List.of(update), clock.instant());

            assertEquals(decided, state(MAIN), "the landing only records: nothing is bumped twice");
            List<LedgerEvent> events = store.query(
                    new LedgerQuery(MAIN, null, null, null, null, Set.of(EventType.BUMP, EventType.LANDED), 0));
            assertEquals(
                    List.of(EventType.BUMP, EventType.LANDED),
                    events.stream().map(LedgerEvent::type).toList());
            LedgerEvent bump = events.get(0);
            LedgerEvent landed = events.get(1);
            assertEquals("bumped", landed.reason());
            assertEquals(decided.latestGranted(), landed.token());
            assertEquals(bump.token(), landed.token());
            assertNull(landed.holder());
            assertEquals("carol", landed.pusher());
            assertEquals(SHA_B, landed.newSha());
        }

        /**
         * One pusher (a shared host account) pushed the same update twice: under alice's token, accepted, and
         * tokenless, bumped; the token push won git's ref lock. Its landing is the accept, by the landed push's
         * own token, not the newer bump.
         */
        @Test
        void aLandingIsTheDecisionOfItsOwnPushNotOfAnotherPushOfTheSameUpdate() {
            PushAttempt underToken = new PushAttempt(
                    "project-42",
                    new Actor("bot", HostKind.PLAIN, null),
                    new PushOptions(java.util.OptionalLong.of(41), "fp2.x", List.of("fence=41")),
                    List.of(update));
            store.append(List.of(
                    Admission.pushEvent(
                            underToken,
                            update,
                            MAIN,
                            "alice",
                            EventType.ACCEPT,
                            41,
                            Reason.ACCEPTED,
                            null,
                            clock.instant()),
                    Admission.pushEvent(
                            tokenless("bot"),
                            update,
                            MAIN,
                            null,
                            EventType.BUMP,
                            57,
                            Reason.BUMPED,
                            null,
                            clock.instant())));

            Landings.landedAsDecided(store, underToken, List.of(update), clock.instant());

            List<LedgerEvent> landed =
                    store.query(new LedgerQuery(MAIN, null, null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(1, landed.size(), landed.toString());
            assertEquals("accepted", landed.get(0).reason());
            assertEquals(41, landed.get(0).token());
            assertEquals("alice", landed.get(0).holder());
        }

        /**
         * A symbolic ref pushed beside its target with the same ids: git reports both and updates the target
         * once, which fence judged under its own name. The alias gets no landing, and none says "store-down".
         */
        @Test
        void aSymbolicRefPushedBesideItsTargetGetsNoLandingOfItsOwn() {
            new AdmissionService(store, FencePolicy.defaults(), clock)
                    .admit(tokenless("carol"), (a, d) -> true, Map.of(), null, false);
            RefUpdate alias = new RefUpdate(SHA_A, SHA_B, "refs/heads/alias");

            Landings.landedAsDecided(store, tokenless("carol"), List.of(alias, update), clock.instant());

            List<LedgerEvent> landed =
                    store.query(new LedgerQuery(null, "project-42", null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(
                    List.of("refs/heads/main"),
                    landed.stream().map(LedgerEvent::ref).toList());
            assertEquals("bumped", landed.get(0).reason());
        }

        /** {@link #store} behind a proxy that counts the calls of each method by name. */
        private LeaseStore counted(Map<String, Integer> calls) {
            return (LeaseStore) java.lang.reflect.Proxy.newProxyInstance(
                    LeaseStore.class.getClassLoader(), new Class<?>[] {LeaseStore.class}, (proxy, method, args) -> {
                        calls.merge(method.getName(), 1, Integer::sum);
                        try {
                            return method.invoke(store, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        /** A tokenless push of main and dev by carol, decided as fence serve decides (applied when made). */
        private PushAttempt mainAndDev() {
            PushAttempt push = new PushAttempt(
                    "project-42",
                    new Actor("carol", HostKind.PLAIN, null),
                    PushOptions.none(),
                    List.of(update, new RefUpdate(SHA_A, SHA_C, "refs/heads/dev")));
            assertTrue(new AdmissionService(store, FencePolicy.defaults(), clock)
                    .admit(push, (a, d) -> true, Map.of(), null, false)
                    .accepted());
            return push;
        }

        /** The repository's landings, having checked they are main's and dev's, each as its bump decided. */
        private List<LedgerEvent> mainAndDevLandedAsBumped() {
            List<LedgerEvent> landed =
                    store.query(new LedgerQuery(null, "project-42", null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(
                    List.of(MAIN, DEV),
                    landed.stream().map(LedgerEvent::resource).toList());
            assertEquals(
                    List.of("bumped", "bumped"),
                    landed.stream().map(LedgerEvent::reason).toList());
            return landed;
        }

        @Test
        void theBranchesOfOnePushFindTheirDecisionsInOneReadOfTheLedger() {
            PushAttempt push = mainAndDev();
            Map<String, Integer> calls = new java.util.HashMap<>();

            Landings.landedAsDecided(counted(calls), push, push.updates(), clock.instant());

            assertEquals(1, calls.get("query"), calls.toString());
            List<LedgerEvent> landed = mainAndDevLandedAsBumped();
            assertEquals(
                    List.of(state(MAIN).latestGranted(), state(DEV).latestGranted()),
                    landed.stream().map(LedgerEvent::token).toList());
        }

        @Test
        void aDecisionThatOtherPushesMovedOutOfTheRepositorysNewestIsFoundByItsResource() {
            PushAttempt push = mainAndDev();
            // Other pushes to the repository, decided after these two and before they landed.
            List<LedgerEvent> others = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                RefUpdate u = new RefUpdate(SHA_A, SHA_B, "refs/heads/other-" + i);
                others.add(Admission.pushEvent(
                        tokenless("dave"),
                        u,
                        "git:project-42:" + u.ref(),
                        null,
                        EventType.ALLOW,
                        0,
                        Reason.ALLOWED,
                        null,
                        clock.instant()));
            }
            store.append(others);

            Landings.landedAsDecided(store, push, push.updates(), clock.instant());

            mainAndDevLandedAsBumped();
        }

        /**
         * An update nothing in the ledger admitted (let through while the store could not be asked, or by
         * another pusher's decision only): its landing claims no decision.
         */
        @Test
        void aLandingWithoutItsPushersDecisionInTheLedgerSaysItWasLetThroughUnrecorded() {
            new AdmissionService(store, FencePolicy.defaults(), clock)
                    .admit(tokenless("carol"), (a, d) -> true, Map.of(), null, false);
            ResourceState decided = state(MAIN);

            Landings.landedAsDecided(store, tokenless("dave"), List.of(update), clock.instant());

            assertEquals(decided, state(MAIN));
            List<LedgerEvent> landed =
                    store.query(new LedgerQuery(MAIN, null, null, null, null, Set.of(EventType.LANDED), 0));
            assertEquals(1, landed.size(), landed.toString());
            assertEquals("store-down", landed.get(0).reason());
            assertEquals(0, landed.get(0).token());
            assertNull(landed.get(0).holder());
            assertEquals("dave", landed.get(0).pusher());
        }
    }

    @Nested
    class MoveGrantSha {
        @Test
        void movesOnlyForTheCurrentGrantAndTheExpectedValue() {
            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "alice", TTL, clock.instant(), SHA_A, candidate));

            LeaseCheck moved = store.moveGrantSha(MAIN, "alice", g.token(), SHA_A, SHA_B);
            LeaseCheck stale = store.moveGrantSha(MAIN, "alice", g.token(), SHA_A, SHA_C);
            LeaseCheck wrongHolder = store.moveGrantSha(MAIN, "bob", g.token(), SHA_B, SHA_C);
            LeaseCheck wrongToken = store.moveGrantSha(MAIN, "alice", g.token() + 1, SHA_B, SHA_C);

            Lease expected = new Lease("alice", g.token(), g.grantedAt(), g.expiresAt(), false, SHA_B);
            assertEquals(new LeaseCheck.Ok(expected), moved);
            assertEquals(new LeaseCheck.Refused(g.token(), expected), stale);
            assertInstanceOf(LeaseCheck.Refused.class, wrongHolder);
            assertInstanceOf(LeaseCheck.Refused.class, wrongToken);
            assertEquals(expected, state(MAIN).lease());
            assertEquals(1, state(MAIN).version());
            assertEquals(1, ledger(MAIN).size());
        }

        @Test
        void movesFromAndToNull() {
            AcquireResult.Granted g = grant(MAIN, "alice");

            assertInstanceOf(LeaseCheck.Ok.class, store.moveGrantSha(MAIN, "alice", g.token(), null, SHA_A));
            assertInstanceOf(LeaseCheck.Refused.class, store.moveGrantSha(MAIN, "alice", g.token(), null, SHA_B));
            assertInstanceOf(LeaseCheck.Ok.class, store.moveGrantSha(MAIN, "alice", g.token(), SHA_A, null));

            assertNull(state(MAIN).lease().grantSha());
        }

        @Test
        void refusedAfterRelease() {
            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "alice", TTL, clock.instant(), SHA_A, candidate));
            store.release(MAIN, "alice", g.token(), clock.instant());

            assertInstanceOf(LeaseCheck.Refused.class, store.moveGrantSha(MAIN, "alice", g.token(), SHA_A, SHA_B));
            assertEquals(SHA_A, state(MAIN).lease().grantSha());
        }
    }

    @Nested
    class Commit {
        @Test
        void appliesEveryWriteAndEventAndIncrementsVersions() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            ResourceState main = state(MAIN);
            ResourceState plain = state(PLAIN);
            Tip tip = new Tip(SHA_B, g.token(), "alice", "alice@host", clock.instant());
            ResourceWrite toMain = acceptedWrite(main, g, tip);
            ResourceWrite toPlain = new ResourceWrite(
                    PLAIN,
                    0,
                    7,
                    0,
                    false,
                    0,
                    null,
                    null,
                    null,
                    store.identity(candidate).generation());
            LedgerEvent accept = event(clock.instant(), EventType.ACCEPT, MAIN, "alice", g.token(), null);

            assertEquals(new CommitResult.Committed(), store.commit(List.of(toMain, toPlain), List.of(accept)));

            Lease lease = new Lease("alice", g.token(), g.grantedAt(), g.expiresAt(), false, null);
            assertEquals(
                    new ResourceState(MAIN, 2, g.token(), g.token(), lease, g.token(), SHA_A, SHA_B, tip), state(MAIN));
            assertEquals(new ResourceState(PLAIN, 1, 7, 0, null, 0, null, null, null), state(PLAIN));
            List<LedgerEvent> events = ledger(MAIN);
            assertEquals(accept.withSeq(events.get(1).seq()), events.get(1));
        }

        @Test
        void aStaleVersionConflictsAndWritesNothing() {
            grant(MAIN, "alice");
            ResourceState main = state(MAIN);
            ResourceState plain = state(PLAIN);
            ResourceWrite fresh = write(plain, 3, 0, null);
            ResourceWrite stale = new ResourceWrite(
                    MAIN,
                    main.version() - 1,
                    main.latestGranted(),
                    0,
                    true,
                    0,
                    null,
                    null,
                    null,
                    store.identity(candidate).generation());
            LedgerEvent bump = event(clock.instant(), EventType.BUMP, PLAIN, null, 3, "tokenless");
            List<LedgerEvent> before = store.query(LedgerQuery.all());

            CommitResult r = store.commit(List.of(fresh, stale), List.of(bump));

            assertEquals(new CommitResult.Conflict(MAIN), r);
            assertEquals(main, state(MAIN));
            assertEquals(plain, state(PLAIN));
            assertEquals(before, store.query(LedgerQuery.all()));
        }

        @Test
        void writesBasedOnTheSameVersionRaceAndOnlyOneWins() {
            ResourceState s = state(PLAIN);

            CommitResult first = store.commit(List.of(write(s, 1, 0, null)), List.of());
            CommitResult second = store.commit(List.of(write(s, 2, 0, null)), List.of());

            assertEquals(new CommitResult.Committed(), first);
            assertEquals(new CommitResult.Conflict(PLAIN), second);
            assertEquals(1, state(PLAIN).latestGranted());
        }

        @Test
        void loweringTheCounterIsAnInternalErrorAndWritesNothing() {
            grant(MAIN, "alice");
            ResourceState main = state(MAIN);
            ResourceState plain = state(PLAIN);
            List<LedgerEvent> before = store.query(LedgerQuery.all());

            assertThrows(
                    InternalException.class,
                    () -> store.commit(
                            List.of(write(plain, 1, 0, null), write(main, main.latestGranted() - 1, 0, null)),
                            List.of(event(clock.instant(), EventType.BUMP, PLAIN, null, 1, null))));

            assertEquals(main, state(MAIN));
            assertEquals(plain, state(PLAIN));
            assertEquals(before, store.query(LedgerQuery.all()));
        }

        @Test
        void aCommitThatWritesOneResourceTwiceIsAnInternalErrorAndWritesNothing() {
            ResourceState plain = state(PLAIN);
            List<LedgerEvent> before = store.query(LedgerQuery.all());

            assertThrows(
                    InternalException.class,
                    () -> store.commit(
                            List.of(write(plain, 1, 0, null), write(plain, 2, 0, null)),
                            List.of(event(clock.instant(), EventType.BUMP, PLAIN, null, 1, null))));

            assertEquals(plain, state(PLAIN));
            assertEquals(before, store.query(LedgerQuery.all()));
        }

        @Test
        void loweringTheHighestAcceptedTokenIsAnInternalErrorAndWritesNothing() {
            ResourceState s = state(PLAIN);
            store.commit(List.of(write(s, 10, 10, null)), List.of());
            ResourceState raised = state(PLAIN);

            assertThrows(InternalException.class, () -> store.commit(List.of(write(raised, 10, 9, null)), List.of()));

            assertEquals(raised, state(PLAIN));
        }

        @Test
        void aStaleWriteWithALowerCounterIsAConflictNotABug() {
            ResourceState s = state(PLAIN);
            store.commit(List.of(write(s, 5, 0, null)), List.of());

            assertEquals(new CommitResult.Conflict(PLAIN), store.commit(List.of(write(s, 1, 0, null)), List.of()));
        }

        @Test
        void keepsTheLeaseUnlessToldToClearIt() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            ResourceState s = state(MAIN);

            store.commit(List.of(write(s, s.latestGranted(), g.token(), null)), List.of());

            assertEquals(s.lease(), state(MAIN).lease());
            assertInstanceOf(LeaseCheck.Ok.class, store.renew(MAIN, "alice", g.token(), TTL, clock.instant()));
        }

        @Test
        void eventsAloneAreAppended() {
            LedgerEvent reject = event(clock.instant(), EventType.REJECT, MAIN, "mallory", 3, "stale-token");

            assertEquals(new CommitResult.Committed(), store.commit(List.of(), List.of(reject)));

            assertEquals(List.of(reject.withSeq(ledger(MAIN).get(0).seq())), ledger(MAIN));
            assertEquals(0, state(MAIN).version());
        }

        @Test
        void aSnapshotOfUnknownResourcesIsEmpty() {
            grant(MAIN, "alice");

            Map<String, ResourceState> snap = store.snapshot(List.of(PLAIN, MAIN, DEV));

            assertEquals(Set.of(PLAIN, MAIN, DEV), snap.keySet());
            assertEquals(ResourceState.empty(PLAIN), snap.get(PLAIN));
            assertEquals(ResourceState.empty(DEV), snap.get(DEV));
            assertEquals(1, snap.get(MAIN).version());
            assertEquals(Map.of(), store.snapshot(List.of()));
        }
    }

    @Nested
    class Identity {
        @Test
        void isCreatedFromTheFirstCandidateAndThenIgnoresCandidates() {
            StoreIdentity first = store.identity(candidate);
            clock.advance(Duration.ofMinutes(1));
            StoreIdentity later = store.identity(Identities.candidate(clock.instant()));

            assertMadeFrom(candidate, first);
            assertEquals(first, later);
        }

        @Test
        void acquireOnAnEmptyStoreCreatesItFromItsCandidate() {
            AcquireResult.Granted g = grant(MAIN, "alice");

            assertEquals(candidate.generation(), g.generation());
            assertMadeFrom(candidate, store.identity(Identities.candidate(clock.instant())));
        }

        @Test
        void acquireUsesTheExistingIdentityNotItsCandidate() {
            store.identity(candidate);
            StoreIdentity other = Identities.candidate(clock.instant().plusSeconds(3600));

            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "alice", TTL, clock.instant(), null, other));

            assertEquals(candidate.generation(), g.generation());
            assertEquals(next(0, g.grantedAt()), g.token());
        }

        @Test
        void survivesReopeningAndCountersContinue() {
            long token = grant(MAIN, "alice").token();
            store.close();

            store = open(StoreOptions.defaults());
            clock.advance(Duration.ofMillis(TTL));

            assertMadeFrom(candidate, store.identity(Identities.candidate(clock.instant())));
            assertEquals(next(token, clock.instant()), grant(MAIN, "bob").token());
        }

        @Test
        void survivesABackendRestartWithItsCounters() throws Exception {
            long token = grant(MAIN, "alice").token();

            restartBackend();
            clock.advance(Duration.ofMillis(TTL));

            assertMadeFrom(candidate, store.identity(Identities.candidate(clock.instant())));
            assertEquals(next(token, clock.instant()), grant(MAIN, "bob").token());
        }

        @Test
        void isSharedByEveryInstanceOnTheSameData() {
            LeaseStore second = open(StoreOptions.defaults());

            StoreIdentity a = store.identity(candidate);
            StoreIdentity b = second.identity(Identities.candidate(clock.instant()));

            assertEquals(a, b);
        }

        /**
         * The loss goes unnoticed (same generation), so the counter restarts behind; a later grant is still
         * above every earlier one, and so is never the same token (and proof) as a grant the holder's other
         * session still has.
         */
        @Test
        void aResourceForgottenWithoutANewGenerationGrantsAboveItsEarlierTokens() throws Exception {
            AcquireResult.Granted first = grant(MAIN, "alice");
            clock.advance(Duration.ofMillis(TTL));
            AcquireResult.Granted second = grant(MAIN, "alice");
            forgetResource(MAIN);
            clock.advance(Duration.ofMillis(1));

            AcquireResult.Granted again = grant(MAIN, "alice");

            assertEquals(first.generation(), again.generation(), "nothing noticed the loss");
            assertNull(again.previous(), "the store forgot the resource");
            assertTrue(again.token() > second.token(), again.token() + " > " + second.token());
        }

        @Test
        void lostDataMeansANewGenerationWhoseTokensExceedTheOldOnes() throws Exception {
            long oldToken = grant(MAIN, "alice").token();
            loseAllData();
            clock.advance(Duration.ofMinutes(1));
            StoreIdentity next = Identities.candidate(clock.instant());

            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "alice", TTL, clock.instant(), null, next));

            assertEquals(next.generation(), g.generation());
            assertNotEquals(candidate.generation(), g.generation());
            assertEquals(store.identity(next).nextToken(0, g.grantedAt().toEpochMilli()), g.token());
            assertTrue(g.token() > oldToken);
            assertMadeFrom(next, store.identity(Identities.candidate(clock.instant())));
            assertEquals(List.of(EventType.GRANT), types(ledger(MAIN)));
        }

        @Test
        void aWriteDecidedUnderAnOlderGenerationIsNeverApplied() throws Exception {
            grant(MAIN, "alice");
            ResourceState before = state(MAIN);
            String oldGeneration = store.identity(candidate).generation();
            loseAllData();
            clock.advance(Duration.ofMinutes(1));
            StoreIdentity next = Identities.candidate(clock.instant());
            assertInstanceOf(AcquireResult.Granted.class, store.acquire(MAIN, "bob", TTL, clock.instant(), null, next));
            ResourceState now = state(MAIN);
            // A verdict judged against the old generation (its proofs, its counters) reaches the store late.
            ResourceWrite late = new ResourceWrite(
                    MAIN,
                    now.version(),
                    now.latestGranted(),
                    now.latestGranted(),
                    false,
                    before.latestGranted(),
                    SHA_A,
                    SHA_B,
                    null,
                    oldGeneration);
            assertInstanceOf(CommitResult.Conflict.class, store.commit(List.of(late), List.of()));
            assertEquals(now, state(MAIN), "nothing was written");
        }

        @Test
        void aNewGenerationIsAboveEveryOldTokenOfAResourceGrantedFasterThanOnceAMillisecond() throws Exception {
            // Eighty grants of one resource within 2 ms of the store's clock, then the data lost 5 ms later:
            // floors in milliseconds put the new generation's first token below the old generation's last.
            long oldToken = 0;
            for (int i = 0; i < 80; i++) {
                if (i == 40) {
                    clock.advance(Duration.ofMillis(2));
                }
                AcquireResult.Granted g = grant(MAIN, "agent-" + i);
                assertInstanceOf(LeaseCheck.Ok.class, store.release(MAIN, g.holder(), g.token(), clock.instant()));
                oldToken = g.token();
            }
            loseAllData();
            clock.advance(Duration.ofMillis(5));
            StoreIdentity next = Identities.candidate(clock.instant());

            AcquireResult.Granted g = assertInstanceOf(
                    AcquireResult.Granted.class, store.acquire(MAIN, "bob", TTL, clock.instant(), null, next));

            assertNotEquals(candidate.generation(), g.generation());
            assertTrue(g.token() > oldToken, g.token() + " after " + oldToken);
        }

        @Test
        void lostDataIsNoticedByIdentity() throws Exception {
            store.identity(candidate);
            loseAllData();
            StoreIdentity next = Identities.candidate(clock.advance(Duration.ofSeconds(1)));

            assertMadeFrom(next, store.identity(next));
        }
    }

    @Nested
    class Concurrency {
        @Test
        void eightThreadsOnTwoInstancesGetExactlyOneWinnerPerRound() throws Exception {
            int threads = 8;
            int rounds = 50;
            StoreOptions patient = new StoreOptions(Duration.ofSeconds(20), Duration.ofDays(90), 0, Duration.ZERO);
            List<LeaseStore> stores = List.of(open(patient), open(patient));
            Instant start = clock.instant();
            CyclicBarrier barrier = new CyclicBarrier(threads);
            AcquireResult[][] results = new AcquireResult[rounds][threads];
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int me = t;
                    LeaseStore mine = stores.get(t % 2);
                    futures.add(pool.submit(() -> {
                        for (int r = 0; r < rounds; r++) {
                            Instant now = start.plusSeconds(r);
                            barrier.await(30, TimeUnit.SECONDS);
                            AcquireResult result = mine.acquire(MAIN, "agent-" + me, 60_000, now, null, candidate);
                            results[r][me] = result;
                            barrier.await(30, TimeUnit.SECONDS);
                            if (result instanceof AcquireResult.Granted g) {
                                assertInstanceOf(LeaseCheck.Ok.class, mine.release(MAIN, g.holder(), g.token(), now));
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }

            long last = floor();
            for (int r = 0; r < rounds; r++) {
                List<AcquireResult.Granted> winners = new ArrayList<>();
                List<AcquireResult.Busy> busy = new ArrayList<>();
                for (AcquireResult result : results[r]) {
                    if (result instanceof AcquireResult.Granted g) {
                        winners.add(g);
                    } else {
                        busy.add((AcquireResult.Busy) result);
                    }
                }
                assertEquals(1, winners.size(), "winners of round " + r);
                AcquireResult.Granted winner = winners.get(0);
                for (AcquireResult.Busy b : busy) {
                    assertEquals(winner.holder(), b.holder());
                    assertEquals(winner.token(), b.token());
                }
                assertEquals(next(last, start.plusSeconds(r)), winner.token(), "round " + r);
                last = winner.token();
            }
            assertEquals(2L * rounds, ledger(MAIN).size());
        }
    }

    @Nested
    class Ledger {
        private List<LedgerEvent> all;

        @BeforeEach
        void fillLedger() {
            Instant t = clock.instant();
            store.append(List.of(
                    event(t, EventType.ACCEPT, MAIN, "alice", 1, null),
                    event(t.plusSeconds(1), EventType.REJECT, DEV, "bob", 2, "stale-token"),
                    event(t.plusSeconds(2), EventType.BUMP, OTHER_REPO, null, 3, "tokenless"),
                    event(t.plusSeconds(3), EventType.ALLOW, PLAIN, "alice", 0, null)));
            store.append(List.of(event(t.plusSeconds(4), EventType.LANDED, MAIN, "bob", 4, null)));
            clock.advance(Duration.ofSeconds(5));
            AcquireResult.Granted g = grant(MAIN, "carol");
            clock.advance(Duration.ofSeconds(1));
            store.release(MAIN, "carol", g.token(), clock.instant());
            all = store.query(LedgerQuery.all());
        }

        @Test
        void keepsEveryFieldAndNumbersEventsInAppendOrder() {
            assertEquals(7, all.size());
            for (int i = 1; i < all.size(); i++) {
                assertTrue(all.get(i).seq() > all.get(i - 1).seq());
            }
            LedgerEvent reject = all.get(1);
            assertEquals(
                    event(clock.instant().minusSeconds(5), EventType.REJECT, DEV, "bob", 2, "stale-token")
                            .withSeq(reject.seq()),
                    reject);
            LedgerEvent bump = all.get(2);
            assertNull(bump.holder());
            assertEquals("owner/repo", bump.repo());
            LedgerEvent allow = all.get(3);
            assertNull(allow.repo());
            assertNull(allow.ref());
        }

        @Test
        void filtersMatchLedgerQueryMatches() {
            Instant t0 = all.get(0).at();
            List<LedgerQuery> queries = List.of(
                    LedgerQuery.forResource(MAIN),
                    LedgerQuery.forResource("nothing"),
                    new LedgerQuery(null, "project-42", null, null, null, null, 0),
                    new LedgerQuery(null, null, "refs/heads/main", null, null, null, 0),
                    new LedgerQuery(null, "owner/repo", "refs/heads/main", null, null, null, 0),
                    new LedgerQuery(null, null, null, "alice", null, null, 0),
                    new LedgerQuery(null, null, null, "carol", null, null, 0),
                    new LedgerQuery(null, null, null, null, t0.plusSeconds(2), null, 0),
                    new LedgerQuery(null, null, null, null, t0.plusMillis(2001), null, 0),
                    new LedgerQuery(null, null, null, null, t0.plusNanos(1_999_999_999), null, 0),
                    new LedgerQuery(null, null, null, null, null, EnumSet.of(EventType.GRANT), 0),
                    new LedgerQuery(null, null, null, null, null, EnumSet.of(EventType.REJECT, EventType.BUMP), 0),
                    new LedgerQuery(null, null, null, null, null, EnumSet.noneOf(EventType.class), 0),
                    new LedgerQuery(
                            MAIN, "project-42", "refs/heads/main", "carol", t0, EnumSet.of(EventType.RELEASE), 0),
                    new LedgerQuery(null, "project-42", null, "bob", t0.plusSeconds(1), null, 0),
                    new LedgerQuery(null, null, null, null, null, null, 0).until(t0.plusSeconds(2)),
                    new LedgerQuery(null, null, null, null, null, null, 0).until(t0.plusNanos(1_999_999_999)),
                    new LedgerQuery(null, null, null, null, t0.plusSeconds(1), null, 0).until(t0.plusMillis(3000)),
                    new LedgerQuery(MAIN, null, null, null, null, null, 0).until(t0.minusMillis(1)));
            for (LedgerQuery q : queries) {
                List<LedgerEvent> expected = all.stream().filter(q::matches).toList();
                assertEquals(expected, store.query(q), q::toString);
            }
        }

        @Test
        void aLimitKeepsTheNewestMatchesOldestFirst() {
            assertEquals(all.subList(4, 7), store.query(new LedgerQuery(null, null, null, null, null, null, 3)));
            assertEquals(all, store.query(new LedgerQuery(null, null, null, null, null, null, 100)));
            List<LedgerEvent> main =
                    all.stream().filter(e -> MAIN.equals(e.resource())).toList();
            assertEquals(
                    main.subList(main.size() - 2, main.size()),
                    store.query(new LedgerQuery(MAIN, null, null, null, null, null, 2)));
        }

        @Test
        void aLimitUpToAnInstantKeepsTheNewestMatchesAtOrBeforeItHoweverManyCameAfter() {
            Instant t0 = all.get(0).at();
            // Two events per window edge: the newest two up to t0 + 2 s are the second and third.
            assertEquals(
                    all.subList(1, 3),
                    store.query(new LedgerQuery(null, null, null, null, null, null, 2).until(t0.plusSeconds(2))));
            assertEquals(
                    List.of(all.get(0)),
                    store.query(new LedgerQuery(MAIN, null, null, null, null, null, 1).until(t0.plusMillis(999))));
            assertEquals(
                    List.of(),
                    store.query(new LedgerQuery(null, null, null, null, null, null, 5).until(t0.minusMillis(1))));
        }

        @Test
        void appendingNothingIsANoOp() {
            store.append(List.of());

            assertEquals(all, store.query(LedgerQuery.all()));
        }
    }

    @Nested
    class Retention {
        @Test
        void eventsOlderThanRetentionAreDroppedByLaterWritesButCountersStay() {
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(1), 0, Duration.ZERO));
            Instant t = clock.instant();
            AcquireResult.Granted old =
                    assertInstanceOf(AcquireResult.Granted.class, s.acquire(MAIN, "alice", TTL, t, null, candidate));
            s.append(List.of(
                    event(t.plusSeconds(1), EventType.ACCEPT, MAIN, "alice", old.token(), null),
                    event(t.plus(Duration.ofHours(12)), EventType.REJECT, DEV, "bob", 1, "stale-token")));

            Instant later = t.plus(Duration.ofHours(25));
            s.append(List.of(event(later, EventType.ALLOW, PLAIN, "carol", 0, null)));

            assertEquals(
                    List.of(EventType.REJECT, EventType.ALLOW),
                    types(s.query(LedgerQuery.all())),
                    "events before " + later.minus(Duration.ofDays(1)) + " are gone, later ones kept");
            assertEquals(old.token(), s.snapshot(List.of(MAIN)).get(MAIN).latestGranted());
            AcquireResult.Granted next =
                    assertInstanceOf(AcquireResult.Granted.class, s.acquire(MAIN, "bob", TTL, later, null, candidate));
            assertEquals(next(old.token(), later), next.token());
        }

        @Test
        void aBacklogPastRetentionDrainsOverSeveralWritesEachDeletingABoundedBatch() {
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(1), 0, Duration.ZERO));
            Instant t = clock.instant();
            List<LedgerEvent> backlog = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++) {
                backlog.add(event(t, EventType.REJECT, DEV, "bob", 1, "stale-token"));
            }
            s.append(backlog);
            Instant later = t.plus(Duration.ofHours(25));
            s.append(List.of(event(later, EventType.ALLOW, PLAIN, "carol", 0, null)));
            int left = s.query(LedgerQuery.forResource(DEV)).size();
            assertTrue(
                    left <= 100 - StoreOptions.PRUNE_MIN,
                    "a write deletes at least a batch of the backlog: " + left + " left");
            for (int w = 1; w <= 4; w++) {
                s.append(List.of(event(later.plusSeconds(w), EventType.ALLOW, PLAIN, "carol", 0, null)));
            }
            assertEquals(0, s.query(LedgerQuery.forResource(DEV)).size(), "drained after five writes");
            assertEquals(5, s.query(LedgerQuery.forResource(PLAIN)).size(), "nothing newer was deleted");
        }

        @Test
        void acquireDropsOldEventsAndSequenceNumbersKeepGrowing() {
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofHours(1), 0, Duration.ZERO));
            Instant t = clock.instant();
            s.append(List.of(event(t, EventType.REJECT, DEV, "bob", 1, "stale-token")));
            long oldSeq = s.query(LedgerQuery.all()).get(0).seq();

            Instant later = t.plus(Duration.ofHours(2));
            s.acquire(MAIN, "alice", TTL, later, null, candidate);

            List<LedgerEvent> events = s.query(LedgerQuery.all());
            assertEquals(List.of(EventType.GRANT), types(events));
            assertTrue(events.get(0).seq() > oldSeq);
        }
    }

    /** The SQL stores' {@link PrunePacing}. */
    @Nested
    class PruningPace {
        private final Duration hour = Duration.ofHours(1);

        @BeforeEach
        void onlyWherePaced() {
            Assumptions.assumeTrue(pacesPruning(), "this store looks for events past retention at every write");
        }

        private List<String> holders(LeaseStore s) {
            return s.query(LedgerQuery.forResource(DEV)).stream()
                    .map(LedgerEvent::holder)
                    .toList();
        }

        @Test
        void afterAPruneFindsNoBacklogEventsComingOfAgeGoWithinASecond() {
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), hour, 0, Duration.ZERO));
            Instant t = clock.instant();
            s.append(List.of(
                    event(t, EventType.REJECT, DEV, "a", 1, "stale-token"),
                    event(t.plusMillis(500), EventType.REJECT, DEV, "d", 1, "stale-token")));
            s.append(List.of(event(t.plus(hour).plusMillis(200), EventType.ALLOW, PLAIN, "b", 0, null)));
            assertEquals(List.of("d"), holders(s), "a, past retention, went; d is not past it yet");
            // d comes of age now, but that prune found no backlog: the next second's writes look for none.
            s.append(List.of(event(t.plus(hour).plusMillis(700), EventType.ALLOW, PLAIN, "c", 0, null)));
            assertEquals(List.of("d"), holders(s));
            s.append(List.of(event(t.plus(hour).plusMillis(1300), EventType.ALLOW, PLAIN, "e", 0, null)));
            assertEquals(List.of(), holders(s), "the first write after the pause deletes it");
        }

        @Test
        void aClockSetBackDoesNotHoldThePause() {
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), hour, 0, Duration.ZERO));
            Instant t = clock.instant();
            // A store clock a year ahead looks, finds nothing, and pauses until a year and a second from now.
            s.append(List.of(event(t.plus(Duration.ofDays(365)), EventType.ALLOW, PLAIN, "far", 0, null)));
            s.append(List.of(event(t.minus(Duration.ofHours(2)), EventType.REJECT, DEV, "old", 1, "stale-token")));
            // Set right again, it looks at once.
            s.append(List.of(event(t, EventType.ALLOW, PLAIN, "now", 0, null)));
            assertEquals(List.of(), holders(s), "the event past retention went");
        }

        @Test
        void aBacklogDrainsAtEveryWriteWithoutPausing() {
            LeaseStore s = open(new StoreOptions(Duration.ofSeconds(2), hour, 0, Duration.ZERO));
            Instant t = clock.instant();
            List<LedgerEvent> backlog = new ArrayList<>();
            for (int i = 0; i < 3 * StoreOptions.PRUNE_MIN + 4; i++) {
                backlog.add(event(t, EventType.REJECT, DEV, "old", 1, "stale-token"));
            }
            s.append(backlog);
            Instant later = t.plus(hour).plusSeconds(1);
            for (int w = 0; w < 4; w++) {
                s.append(List.of(event(later.plusMillis(w), EventType.ALLOW, PLAIN, "c", 0, null)));
            }
            assertEquals(List.of(), holders(s), "four writes within 4 ms deleted three full batches and the rest");
        }
    }

    @Nested
    class RetentionIsTheStores {
        @Test
        void aClientsUrlCannotShortenTheSharedLedger() {
            Instant t = clock.instant();
            store.append(List.of(event(t, EventType.REJECT, DEV, "bob", 1, "stale-token")));
            assertEquals(Duration.ofDays(90), store.retention(() -> candidate), "the first opener's default");
            LeaseStore greedy = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ZERO)
                    .withRetentionAsked(Duration.ofMillis(1)));
            ConfigException e = assertThrows(
                    ConfigException.class,
                    () -> greedy.append(
                            List.of(event(t.plus(Duration.ofDays(1)), EventType.ALLOW, PLAIN, "c", 0, null))));
            assertTrue(e.getMessage().contains("retention is a setting of the store"), e.getMessage());
            assertEquals(List.of(EventType.REJECT), types(store.query(LedgerQuery.all())), "nothing was trimmed");
            LeaseStore asking = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ZERO)
                    .withRetentionAsked(Duration.ofDays(90)));
            asking.append(List.of(event(t.plusSeconds(1), EventType.ALLOW, PLAIN, "c", 0, null)));
            assertEquals(2, store.query(LedgerQuery.all()).size(), "a URL asking for the store's own value is served");
        }

        @Test
        void aUrlRefusedForItsRetentionWritesNothingThroughACommitOrARelease() {
            AcquireResult.Granted g = grant(MAIN, "alice");
            assertEquals(Duration.ofDays(90), store.retention(() -> candidate));
            LeaseStore greedy = open(new StoreOptions(Duration.ofSeconds(2), Duration.ofDays(90), 0, Duration.ZERO)
                    .withRetentionAsked(Duration.ofMillis(1)));
            ResourceState before = state(MAIN);
            List<LedgerEvent> ledgerBefore = ledger(MAIN);
            Tip tip = new Tip(SHA_B, g.token(), "alice", "alice@host", clock.instant());
            ResourceWrite accept = acceptedWrite(before, g, tip);

            assertThrows(
                    ConfigException.class,
                    () -> greedy.commit(
                            List.of(accept),
                            List.of(event(clock.instant(), EventType.ACCEPT, MAIN, "alice", g.token(), null))));
            assertThrows(ConfigException.class, () -> greedy.release(MAIN, "alice", g.token(), clock.instant()));

            assertEquals(before, state(MAIN), "neither the refused commit nor the refused release wrote state");
            assertEquals(ledgerBefore, ledger(MAIN), "nor an event");
            assertInstanceOf(LeaseCheck.Ok.class, store.release(MAIN, "alice", g.token(), clock.instant()));
        }

        @Test
        void anAdminChangesItForEveryClient() {
            Instant t = clock.instant();
            store.append(List.of(event(t, EventType.REJECT, DEV, "bob", 1, "stale-token")));
            assertEquals(Duration.ofHours(1), store.retention(Duration.ofHours(1), "admin", t, () -> candidate));
            LeaseStore other = open(StoreOptions.defaults());
            assertEquals(Duration.ofHours(1), other.retention(() -> candidate));
            other.append(List.of(event(t.plus(Duration.ofHours(2)), EventType.ALLOW, PLAIN, "c", 0, null)));
            assertEquals(List.of(EventType.ALLOW), types(store.query(LedgerQuery.all())));
        }

        @Test
        void aChangeIsRecordedWithWhoAndBothValuesAndOutlivesTheTrimItCauses() {
            Instant t = clock.instant();
            store.append(List.of(event(t, EventType.REJECT, DEV, "bob", 1, "stale-token")));
            Instant changed = clock.advance(Duration.ofHours(2));

            assertEquals(
                    Duration.ofMillis(1), store.retention(Duration.ofMillis(1), "mallory", changed, () -> candidate));

            List<LedgerEvent> events = store.query(LedgerQuery.all());
            assertEquals(List.of(EventType.RETENTION), types(events), "the change trimmed the old event, not itself");
            LedgerEvent e = events.get(0);
            assertEquals(LedgerEvent.STORE_RESOURCE, e.resource());
            assertEquals("mallory", e.pusher());
            assertEquals("ledger retention 90d -> 1ms", e.detail());
            assertEquals(changed, e.at(), "dated by the store's clock (the test's, here)");
            assertNull(e.repo());
            assertEquals(0, e.token());

            LeaseStore other = open(StoreOptions.defaults());
            assertEquals(Duration.ofDays(90), other.retention(Duration.ofDays(90), "alice", changed, () -> candidate));
            List<LedgerEvent> changes = store.query(new LedgerQuery(
                    LedgerEvent.STORE_RESOURCE, null, null, null, null, java.util.Set.of(EventType.RETENTION), 0));
            assertEquals(
                    List.of("ledger retention 90d -> 1ms", "ledger retention 1ms -> 90d"),
                    changes.stream().map(LedgerEvent::detail).toList(),
                    "each change names the value it replaced, and the changes put it back are on record too");
            assertEquals(
                    List.of("mallory", "alice"),
                    changes.stream().map(LedgerEvent::pusher).toList());
        }

        @Test
        void readingItRecordsNothing() {
            assertEquals(Duration.ofDays(90), store.retention(() -> candidate));
            assertEquals(List.of(), store.query(LedgerQuery.all()));
        }
    }

    @Nested
    class OddNames {
        @Test
        void unicodeLongAndSqlLookingNamesRoundTripAndStayDistinct() {
            List<String> names = List.of(
                    "git:プロジェクト:refs/heads/機能/ü",
                    "🦀/crab \"quoted\" 'single'",
                    "x'); DROP TABLE resources; --",
                    "100% _under_ \\back\\slash",
                    "r".repeat(512),
                    "é".repeat(512),
                    "\uD83E\uDD80".repeat(256),
                    "caf\u00e9",
                    "cafe\u0301",
                    "Case",
                    "case");
            List<Long> tokens = new ArrayList<>();
            for (String name : names) {
                AcquireResult.Granted g = assertInstanceOf(
                        AcquireResult.Granted.class, store.acquire(name, name, TTL, clock.instant(), name, candidate));
                tokens.add(g.token());
            }

            Map<String, ResourceState> snap = store.snapshot(names);
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                ResourceState s = snap.get(name);
                assertEquals(name, s.resource());
                assertEquals(
                        new Lease(
                                name,
                                tokens.get(i),
                                clock.instant(),
                                clock.instant().plusMillis(TTL),
                                false,
                                name),
                        s.lease());
                assertEquals(1, s.version(), name);
                List<LedgerEvent> events = ledger(name);
                assertEquals(1, events.size(), name);
                assertEquals(name, events.get(0).holder());
                assertEquals(
                        events, store.query(new LedgerQuery(null, null, null, name, null, null, 0)), "holder " + name);
                assertInstanceOf(LeaseCheck.Ok.class, store.release(name, name, tokens.get(i), clock.instant()));
            }
            assertEquals(2 * names.size(), store.query(LedgerQuery.all()).size());
        }

        @Test
        void oddDetailsAndShasRoundTrip() {
            String detail = "line one\nline two\ttab\u0000nul 🦀 " + "d".repeat(2000);
            LedgerEvent e = new LedgerEvent(
                    0, clock.instant(), EventType.REJECT, PLAIN, null, null, null, null, 0, null, null, "r", detail);

            store.append(List.of(e));

            assertEquals(List.of(e.withSeq(ledger(PLAIN).get(0).seq())), ledger(PLAIN));
        }
    }

    @Nested
    class Lifecycle {
        @Test
        void describeIsShortAndNonBlank() {
            assertFalse(store.describe().isBlank());
            assertFalse(store.describe().toLowerCase(Locale.ROOT).contains("password"));
        }

        @Test
        void closeTwiceNeverThrows() {
            store.close();
            store.close();
        }
    }
}
