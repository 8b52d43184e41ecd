package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcquireResult;
import dev.fence.core.CommitResult;
import dev.fence.core.ConfigException;
import dev.fence.core.EventType;
import dev.fence.core.Identities;
import dev.fence.core.InternalException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseCheck;
import dev.fence.core.LeaseService;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.ObjectIds;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.Resources;
import dev.fence.core.StoreIdentity;
import dev.fence.core.StoreUnavailableException;
import dev.fence.core.Tip;
import dev.fence.store.StoreOptions;
import dev.fence.testing.PrivateRedis;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/** {@link RedisLeaseStore} against a private redis-server started for this class. */
@ProcessTest
class RedisLeaseStoreTest {
    private static final Duration TIMEOUT = Duration.ofMillis(500);
    private static final StoreOptions OPTIONS =
            new StoreOptions(TIMEOUT, Duration.ofDays(90), 0, Duration.ofMillis(100)).withCallerClock();
    private static final long TTL = 30_000;
    private static final String SHA_A = "a".repeat(40);
    private static final String SHA_B = "b".repeat(40);

    @RegisterExtension
    static final PrivateRedis redis = new PrivateRedis();

    private RedisLeaseStore store;
    private Instant now;
    private StoreIdentity candidate;

    @BeforeEach
    void setUp() {
        store = openStore();
        // Whole milliseconds: the store keeps instants as epoch ms.
        now = Instant.ofEpochMilli(System.currentTimeMillis());
        candidate = Identities.candidate(now);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    /** An empty store on the class's server (restarted if a test left it down). */
    protected RedisLeaseStore openStore() {
        return RedisLeaseStore.open(redis.empty().url(), OPTIONS);
    }

    // ---- identity

    @Test
    void identityIsCreatedFromTheFirstCandidateAndKept() {
        StoreIdentity first = store.identity(candidate);
        assertEquals(candidate, first);
        StoreIdentity again = store.identity(Identities.candidate(now.plusSeconds(5)));
        assertEquals(candidate, again);
        assertArrayEquals(candidate.proofKey(), again.proofKey());

        try (RedisLeaseStore other = RedisLeaseStore.open(redis.server().url(), OPTIONS)) {
            assertEquals(candidate, other.identity(Identities.candidate(now.plusSeconds(9))));
        }
    }

    @Test
    void acquireCreatesTheIdentityWhenNoneExists() {
        AcquireResult.Granted g = granted(store.acquire("r", "alice", TTL, now, null, candidate));
        assertEquals(candidate.generation(), g.generation());
        assertEquals(candidate.floor() + 1, g.token());
        assertEquals(candidate, store.identity(Identities.candidate(now.plusSeconds(1))));
    }

    // ---- acquire

    @Test
    void firstGrantTakesFloorPlusOneAndRecordsTheLease() {
        StoreIdentity id = store.identity(candidate);
        AcquireResult.Granted g = granted(store.acquire("r", "alice", TTL, now, SHA_A, candidate));
        assertEquals(
                new AcquireResult.Granted(
                        "r", "alice", id.floor() + 1, id.generation(), now, now.plusMillis(TTL), null, null),
                g);

        ResourceState s = store.snapshot(List.of("r")).get("r");
        assertEquals(1, s.version());
        assertEquals(g.token(), s.latestGranted());
        assertEquals(0, s.highestAccepted());
        assertEquals(new Lease("alice", g.token(), now, now.plusMillis(TTL), false, SHA_A), s.lease());
        assertEquals(List.of(EventType.GRANT), types(store.query(LedgerQuery.forResource("r"))));
    }

    @Test
    void anotherHoldersLiveLeaseIsBusyAndNothingIsWritten() {
        AcquireResult.Granted g = granted(store.acquire("r", "alice", TTL, now, null, candidate));
        ResourceState before = store.snapshot(List.of("r")).get("r");

        AcquireResult busy = store.acquire("r", "bob", TTL, now.plusMillis(TTL - 1), null, candidate);
        assertEquals(new AcquireResult.Busy("r", "alice", g.token(), g.expiresAt()), busy);
        assertEquals(before, store.snapshot(List.of("r")).get("r"));
        assertEquals(1, store.query(LedgerQuery.forResource("r")).size());
    }

    @Test
    void theSameHolderReplacesItsLiveLeaseWithANewToken() {
        AcquireResult.Granted first = granted(store.acquire("r", "alice", TTL, now, SHA_A, candidate));
        AcquireResult.Granted second = granted(store.acquire("r", "alice", TTL, now.plusMillis(5), null, candidate));
        assertEquals(candidate.nextToken(first.token(), now.plusMillis(5).toEpochMilli()), second.token());
        assertEquals(new Lease("alice", first.token(), now, now.plusMillis(TTL), false, SHA_A), second.previous());
        ResourceState s = store.snapshot(List.of("r")).get("r");
        assertEquals(2, s.version());
        assertNull(s.lease().grantSha());
        assertEquals(List.of(EventType.GRANT, EventType.GRANT), types(store.query(LedgerQuery.forResource("r"))));
    }

    @Test
    void aLapsedLeaseIsRecordedAsExpiredAtItsExpiryWhenTheNextGrantComes() {
        String resource = Resources.forRef("proj", "main");
        AcquireResult.Granted a = granted(store.acquire(resource, "alice", 1000, now, null, candidate));
        Instant later = now.plusMillis(1000); // expiresAt <= now: lapsed
        AcquireResult.Granted b = granted(store.acquire(resource, "bob", TTL, later, null, candidate));
        assertEquals(candidate.nextToken(a.token(), later.toEpochMilli()), b.token());
        assertEquals("alice", b.previous().holder());

        List<LedgerEvent> events = store.query(LedgerQuery.forResource(resource));
        assertEquals(List.of(EventType.GRANT, EventType.EXPIRE, EventType.GRANT), types(events));
        LedgerEvent expire = events.get(1);
        assertEquals(now.plusMillis(1000), expire.at());
        assertEquals("alice", expire.holder());
        assertEquals(a.token(), expire.token());
        assertEquals("proj", expire.repo());
        assertEquals("refs/heads/main", expire.ref());
        assertEquals(LedgerEvent.lease(later, EventType.GRANT, resource, "bob", b.token()), withoutSeq(events.get(2)));
        assertTrue(events.get(0).seq() < events.get(1).seq()
                && events.get(1).seq() < events.get(2).seq());
    }

    @Test
    void aReleasedLeaseIsReplacedWithoutAnExpireEvent() {
        AcquireResult.Granted a = granted(store.acquire("r", "alice", TTL, now, null, candidate));
        assertInstanceOf(LeaseCheck.Ok.class, store.release("r", "alice", a.token(), now.plusMillis(1)));
        AcquireResult.Granted b = granted(store.acquire("r", "bob", TTL, now.plusMillis(2), null, candidate));
        assertTrue(b.previous().released());
        assertEquals(
                List.of(EventType.GRANT, EventType.RELEASE, EventType.GRANT),
                types(store.query(LedgerQuery.forResource("r"))));
    }

    @Test
    void nonPositiveTtlIsRejected() {
        assertThrows(InvalidInputException.class, () -> store.acquire("r", "alice", 0, now, null, candidate));
        assertThrows(InvalidInputException.class, () -> store.renew("r", "alice", 1, -5, now));
    }

    // ---- renew, release, moveGrantSha

    @Test
    void renewExtendsOnlyTheCurrentGrantAndChangesNoVersionAndRecordsOnlyTheLapseAndTheRenewal() {
        AcquireResult.Granted g = granted(store.acquire("r", "alice", 1000, now, SHA_A, candidate));
        Instant later = now.plusMillis(5000); // lapsed, but no one superseded it
        LeaseCheck ok = store.renew("r", "alice", g.token(), TTL, later);
        assertEquals(new LeaseCheck.Ok(new Lease("alice", g.token(), now, later.plusMillis(TTL), false, SHA_A)), ok);

        Lease current = ((LeaseCheck.Ok) ok).lease();
        assertEquals(new LeaseCheck.Refused(g.token(), current), store.renew("r", "bob", g.token(), TTL, later));
        assertEquals(new LeaseCheck.Refused(g.token(), current), store.renew("r", "alice", g.token() - 1, TTL, later));
        assertEquals(new LeaseCheck.Refused(0, null), store.renew("unknown", "alice", g.token(), TTL, later));

        ResourceState s = store.snapshot(List.of("r")).get("r");
        assertEquals(1, s.version());
        assertEquals(current, s.lease());
        // The renew found the lease lapsed: the ledger shows the lapse, dated when it began, and the renewal,
        // dated when it held again; refusals add nothing.
        List<LedgerEvent> events = store.query(LedgerQuery.forResource("r"));
        assertEquals(List.of(EventType.GRANT, EventType.EXPIRE, EventType.RENEW), types(events));
        assertEquals(now.plusMillis(1000), events.get(1).at());
        assertEquals(later, events.get(2).at());
    }

    @Test
    void aSupersededTokenCannotRenewOrRelease() {
        AcquireResult.Granted a = granted(store.acquire("r", "alice", 1000, now, null, candidate));
        AcquireResult.Granted b = granted(store.acquire("r", "bob", TTL, now.plusMillis(2000), null, candidate));
        LeaseCheck refused = store.renew("r", "alice", a.token(), TTL, now.plusMillis(2001));
        assertEquals(b.token(), ((LeaseCheck.Refused) refused).latestGranted());
        assertEquals("bob", ((LeaseCheck.Refused) refused).current().holder());
        assertInstanceOf(LeaseCheck.Refused.class, store.release("r", "alice", a.token(), now.plusMillis(2001)));
        assertTrue(store.snapshot(List.of("r")).get("r").lease().isLive(now.plusMillis(2001)));
    }

    @Test
    void releaseMarksTheLeaseReleasedOnceAndAppendsAnEvent() {
        AcquireResult.Granted g = granted(store.acquire("r", "alice", TTL, now, SHA_A, candidate));
        Instant at = now.plusMillis(10);
        assertEquals(
                new LeaseCheck.Ok(new Lease("alice", g.token(), now, at, true, SHA_A)),
                store.release("r", "alice", g.token(), at));
        assertInstanceOf(LeaseCheck.Refused.class, store.release("r", "alice", g.token(), at.plusMillis(1)));
        assertInstanceOf(LeaseCheck.Refused.class, store.renew("r", "alice", g.token(), TTL, at.plusMillis(1)));

        ResourceState s = store.snapshot(List.of("r")).get("r");
        assertEquals(1, s.version());
        assertFalse(s.lease().isLive(at));
        List<LedgerEvent> events = store.query(LedgerQuery.forResource("r"));
        assertEquals(List.of(EventType.GRANT, EventType.RELEASE), types(events));
        assertEquals(LedgerEvent.lease(at, EventType.RELEASE, "r", "alice", g.token()), withoutSeq(events.get(1)));
    }

    @Test
    void moveGrantShaIsACompareAndSetOnTheCurrentGrant() {
        AcquireResult.Granted g = granted(store.acquire("r", "alice", TTL, now, null, candidate));
        assertInstanceOf(LeaseCheck.Refused.class, store.moveGrantSha("r", "alice", g.token(), SHA_A, SHA_B));
        LeaseCheck ok = store.moveGrantSha("r", "alice", g.token(), null, SHA_A);
        assertEquals(SHA_A, ((LeaseCheck.Ok) ok).lease().grantSha());
        assertEquals(
                SHA_B,
                ((LeaseCheck.Ok) store.moveGrantSha("r", "alice", g.token(), SHA_A, SHA_B))
                        .lease()
                        .grantSha());
        assertInstanceOf(LeaseCheck.Refused.class, store.moveGrantSha("r", "alice", g.token(), SHA_A, SHA_B));
        assertInstanceOf(LeaseCheck.Refused.class, store.moveGrantSha("r", "bob", g.token(), SHA_B, SHA_A));
        assertInstanceOf(LeaseCheck.Refused.class, store.moveGrantSha("r", "alice", g.token() + 1, SHA_B, SHA_A));
        assertInstanceOf(LeaseCheck.Ok.class, store.moveGrantSha("r", "alice", g.token(), SHA_B, null));

        ResourceState s = store.snapshot(List.of("r")).get("r");
        assertEquals(1, s.version());
        assertNull(s.lease().grantSha());
    }

    // ---- snapshot and commit

    @Test
    void snapshotReturnsEveryRequestedResourceEmptyWhenUnknown() {
        granted(store.acquire("a", "alice", TTL, now, null, candidate));
        Map<String, ResourceState> states = store.snapshot(List.of("a", "never-seen", "a"));
        assertEquals(Set.of("a", "never-seen"), states.keySet());
        assertEquals(ResourceState.empty("never-seen"), states.get("never-seen"));
        assertEquals("alice", states.get("a").lease().holder());
        assertEquals(Map.of(), store.snapshot(List.of()));
    }

    @Test
    void commitAppliesEveryWriteAndEventAndBumpsVersions() {
        AcquireResult.Granted g = granted(store.acquire("a", "alice", TTL, now, null, candidate));
        Tip tip = new Tip(SHA_B, g.token(), "alice", "ci-bot", now.plusMillis(3));
        ResourceWrite writeA = new ResourceWrite(
                "a",
                1,
                g.token(),
                g.token(),
                false,
                g.token(),
                SHA_A,
                SHA_B,
                tip,
                store.identity(candidate).generation());
        ResourceWrite writeB = new ResourceWrite(
                "b",
                0,
                7,
                0,
                true,
                0,
                ObjectIds.ZERO,
                null,
                null,
                store.identity(candidate).generation());
        LedgerEvent accept = new LedgerEvent(
                0,
                now.plusMillis(3),
                EventType.ACCEPT,
                "a",
                null,
                null,
                "alice",
                "ci-bot",
                g.token(),
                SHA_A,
                SHA_B,
                null,
                "");
        LedgerEvent bump = new LedgerEvent(
                0,
                now.plusMillis(4),
                EventType.BUMP,
                "b",
                null,
                null,
                null,
                "ci-bot",
                7,
                null,
                null,
                "tokenless",
                null);

        assertEquals(new CommitResult.Committed(), store.commit(List.of(writeA, writeB), List.of(accept, bump)));

        Map<String, ResourceState> s = store.snapshot(List.of("a", "b"));
        assertEquals(
                new ResourceState(
                        "a",
                        2,
                        g.token(),
                        g.token(),
                        new Lease("alice", g.token(), now, now.plusMillis(TTL), false, null),
                        g.token(),
                        SHA_A,
                        SHA_B,
                        tip),
                s.get("a"));
        assertEquals(new ResourceState("b", 1, 7, 0, null, 0, ObjectIds.ZERO, null, null), s.get("b"));

        List<LedgerEvent> events = store.query(LedgerQuery.all());
        assertEquals(List.of(EventType.GRANT, EventType.ACCEPT, EventType.BUMP), types(events));
        assertEquals(accept, withoutSeq(events.get(1)));
        assertEquals(bump, withoutSeq(events.get(2)));
    }

    @Test
    void commitClearsTheLeaseAndNulledFields() {
        AcquireResult.Granted g = granted(store.acquire("a", "alice", TTL, now, null, candidate));
        Tip tip = new Tip(SHA_B, 0, null, "ci-bot", now);
        assertInstanceOf(
                CommitResult.Committed.class,
                store.commit(
                        List.of(new ResourceWrite(
                                "a",
                                1,
                                g.token(),
                                0,
                                false,
                                0,
                                SHA_A,
                                SHA_B,
                                tip,
                                store.identity(candidate).generation())),
                        List.of()));
        long bumped = g.token() + 1;
        assertInstanceOf(
                CommitResult.Committed.class,
                store.commit(
                        List.of(new ResourceWrite(
                                "a",
                                2,
                                bumped,
                                0,
                                true,
                                0,
                                null,
                                null,
                                null,
                                store.identity(candidate).generation())),
                        List.of()));
        assertEquals(
                new ResourceState("a", 3, bumped, 0, null, 0, null, null, null),
                store.snapshot(List.of("a")).get("a"));
        assertInstanceOf(LeaseCheck.Refused.class, store.renew("a", "alice", g.token(), TTL, now));
        AcquireResult.Granted next = granted(store.acquire("a", "bob", TTL, now, null, candidate));
        assertEquals(bumped + 1, next.token());
        assertNull(next.previous());
    }

    @Test
    void aStaleVersionConflictsAndWritesNothing() {
        AcquireResult.Granted g = granted(store.acquire("a", "alice", TTL, now, null, candidate));
        Map<String, ResourceState> before = store.snapshot(List.of("a", "b"));
        ResourceWrite fresh = new ResourceWrite(
                "b",
                0,
                5,
                5,
                false,
                5,
                SHA_A,
                SHA_A,
                null,
                store.identity(candidate).generation());
        ResourceWrite stale = new ResourceWrite(
                "a",
                0,
                g.token(),
                g.token(),
                false,
                0,
                null,
                null,
                null,
                store.identity(candidate).generation());
        LedgerEvent event = LedgerEvent.lease(now, EventType.ACCEPT, "b", "carol", 5);

        assertEquals(new CommitResult.Conflict("a"), store.commit(List.of(fresh, stale), List.of(event)));
        assertEquals(before, store.snapshot(List.of("a", "b")));
        assertEquals(List.of(EventType.GRANT), types(store.query(LedgerQuery.all())));
    }

    @Test
    void aWriteThatWouldLowerACounterIsABugAndWritesNothing() {
        AcquireResult.Granted g = granted(store.acquire("a", "alice", TTL, now, null, candidate));
        Map<String, ResourceState> before = store.snapshot(List.of("a", "b"));
        ResourceWrite fine = new ResourceWrite(
                "b",
                0,
                1,
                1,
                false,
                0,
                null,
                null,
                null,
                store.identity(candidate).generation());
        ResourceWrite lowers = new ResourceWrite(
                "a",
                1,
                g.token() - 1,
                0,
                false,
                0,
                null,
                null,
                null,
                store.identity(candidate).generation());
        InternalException e = assertThrows(
                InternalException.class,
                () -> store.commit(
                        List.of(fine, lowers), List.of(LedgerEvent.lease(now, EventType.BUMP, "a", null, 1))));
        assertTrue(e.getMessage().contains("lower the counter of a"), e.getMessage());
        assertEquals(before, store.snapshot(List.of("a", "b")));
        assertEquals(1, store.query(LedgerQuery.all()).size());

        assertInstanceOf(
                CommitResult.Committed.class,
                store.commit(
                        List.of(new ResourceWrite(
                                "a",
                                1,
                                g.token(),
                                9,
                                false,
                                0,
                                null,
                                null,
                                null,
                                store.identity(candidate).generation())),
                        List.of()));
        assertThrows(
                InternalException.class,
                () -> store.commit(
                        List.of(new ResourceWrite(
                                "a",
                                2,
                                g.token(),
                                8,
                                false,
                                0,
                                null,
                                null,
                                null,
                                store.identity(candidate).generation())),
                        List.of()));
    }

    @Test
    void aRenewalBetweenSnapshotAndCommitSurvivesTheCommit() {
        AcquireResult.Granted g = granted(store.acquire("a", "alice", TTL, now, null, candidate));
        store.renew("a", "alice", g.token(), TTL, now.plusMillis(100));
        store.commit(
                List.of(new ResourceWrite(
                        "a",
                        1,
                        g.token(),
                        g.token(),
                        false,
                        0,
                        null,
                        null,
                        null,
                        store.identity(candidate).generation())),
                List.of());
        assertEquals(
                now.plusMillis(100 + TTL),
                store.snapshot(List.of("a")).get("a").lease().expiresAt());
    }

    // ---- ledger

    @Test
    void queryFiltersAndReturnsTheNewestMatchesOldestFirst() {
        String main = Resources.forRef("proj", "main");
        String dev = Resources.forRef("proj", "dev");
        List<LedgerEvent> appended = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            LedgerEvent e = new LedgerEvent(
                    0,
                    now.plusMillis(i),
                    i % 2 == 0 ? EventType.REJECT : EventType.LANDED,
                    i < 5 ? main : dev,
                    "proj",
                    i < 5 ? "refs/heads/main" : "refs/heads/dev",
                    i % 3 == 0 ? "alice" : null,
                    "pusher",
                    i,
                    null,
                    SHA_A,
                    i % 2 == 0 ? "stale-token" : null,
                    "note " + i);
            appended.add(e);
        }
        store.append(appended.subList(0, 4));
        store.append(appended.subList(4, 10));
        store.append(List.of());

        List<LedgerEvent> all = store.query(LedgerQuery.all());
        assertEquals(appended, all.stream().map(RedisLeaseStoreTest::withoutSeq).toList());
        for (int i = 1; i < all.size(); i++) {
            assertTrue(all.get(i - 1).seq() < all.get(i).seq());
        }
        assertEquals(
                List.of(0L, 2L, 4L),
                tokens(store.query(new LedgerQuery(main, null, null, null, null, Set.of(EventType.REJECT), 0))));
        assertEquals(
                List.of(5L, 6L, 7L, 8L, 9L),
                tokens(store.query(new LedgerQuery(null, null, "refs/heads/dev", null, null, null, 0))));
        assertEquals(
                List.of(0L, 3L, 6L, 9L),
                tokens(store.query(new LedgerQuery(null, "proj", null, "alice", null, null, 0))));
        assertEquals(
                List.of(7L, 8L, 9L),
                tokens(store.query(new LedgerQuery(null, null, null, null, now.plusMillis(7), null, 0))));
        assertEquals(List.of(7L, 8L, 9L), tokens(store.query(new LedgerQuery(null, null, null, null, null, null, 3))));
        assertEquals(
                List.of(1L, 3L),
                tokens(store.query(new LedgerQuery(main, null, null, null, null, Set.of(EventType.LANDED), 5))));
        assertEquals(List.of(), store.query(LedgerQuery.forResource("nothing")));
    }

    @Test
    void queryPagesThroughLongLedgers() {
        List<LedgerEvent> events = new ArrayList<>();
        for (int i = 1; i <= 2500; i++) {
            events.add(LedgerEvent.lease(now, EventType.REJECT, i % 2 == 0 ? "even" : "odd", "h", i));
        }
        store.append(events);
        assertEquals(2500, store.query(LedgerQuery.all()).size());
        List<Long> lastOdd = tokens(store.query(new LedgerQuery("odd", null, null, null, null, null, 1200)));
        assertEquals(1200, lastOdd.size());
        assertEquals(101L, lastOdd.get(0));
        assertEquals(2499L, lastOdd.get(1199));
    }

    @Test
    void appendTrimsEventsPastRetentionOnTheServersClockButNeverCounters() throws InterruptedException {
        // Retention is measured on the server's clock: the events' own times (a client's clock) do not count.
        try (RedisLeaseStore shortMemory = RedisLeaseStore.open(
                redis.server().url(), new StoreOptions(TIMEOUT, Duration.ofMillis(50), 0, Duration.ofMillis(100)))) {
            AcquireResult.Granted g = granted(shortMemory.acquire("r", "alice", TTL, now, null, candidate));
            shortMemory.append(List.of(LedgerEvent.lease(now, EventType.REJECT, "r", "x", 1)));
            Thread.sleep(120);
            shortMemory.append(List.of(LedgerEvent.lease(now, EventType.LANDED, "r", "x", 2)));
            List<LedgerEvent> left = shortMemory.query(LedgerQuery.all());
            assertEquals(List.of(EventType.LANDED), types(left));
            assertEquals(3, left.get(0).seq());
            assertEquals(g.token(), shortMemory.snapshot(List.of("r")).get("r").latestGranted());
        }
    }

    @Test
    void ledgerSequenceResumesFromTheStreamIfItsCounterIsLost() {
        store.append(List.of(
                LedgerEvent.lease(now, EventType.REJECT, "r", "x", 1),
                LedgerEvent.lease(now, EventType.REJECT, "r", "x", 2)));
        redis.server().command("DEL", RedisKeys.LEDGER_SEQ);
        store.append(List.of(LedgerEvent.lease(now, EventType.REJECT, "r", "x", 3)));
        assertEquals(
                List.of(1L, 2L, 3L),
                store.query(LedgerQuery.all()).stream().map(LedgerEvent::seq).toList());
    }

    private static LedgerEvent push(Instant at, String resource, long token) {
        return LedgerEvent.lease(at, EventType.ACCEPT, resource, "bot", token);
    }

    @Test
    void queriesByResourceOrRepoReadTheirIndexWhichForgetsWhatRetentionTrimmed() {
        store.identity(candidate);
        String old = "git:repo-a:refs/heads/old";
        String main = "git:repo-a:refs/heads/main";
        Instant longAgo = now.minus(Duration.ofDays(100));
        store.append(List.of(push(longAgo, old, 1), push(longAgo, main, 2)));
        assertEquals(":2", redis.server().command("ZCARD", RedisKeys.eventsOfRepo("repo-a")));
        assertEquals(1, store.query(LedgerQuery.forResource(old)).size());

        // The next append trims both (past 90 days): the stream forgets them at once, old's index only when
        // old has an event again, and no query returns a trimmed event meanwhile.
        store.append(List.of(push(now, main, 3)));
        assertEquals(":1", redis.server().command("ZCARD", RedisKeys.eventsOfResource(main)));
        assertEquals(":1", redis.server().command("ZCARD", RedisKeys.eventsOfResource(old)));
        assertEquals(List.of(), store.query(LedgerQuery.forResource(old)));
        assertEquals(
                List.of(3L),
                store.query(new LedgerQuery(null, "repo-a", null, null, null, null, 10)).stream()
                        .map(LedgerEvent::token)
                        .toList());
        store.append(List.of(push(now, old, 4)));
        assertEquals(":1", redis.server().command("ZCARD", RedisKeys.eventsOfResource(old)));

        // Newest first with a limit and a start: the index is read only as far as they need.
        for (int i = 5; i < 40; i++) {
            store.append(List.of(push(now.plusMillis(i), main, i)));
        }
        assertEquals(
                List.of(37L, 38L, 39L),
                store.query(new LedgerQuery(main, null, null, null, now.plusMillis(10), null, 3)).stream()
                        .map(LedgerEvent::token)
                        .toList());
        assertEquals(
                35,
                store.query(new LedgerQuery(main, null, null, null, now.plusMillis(5), null, 100))
                        .size());
    }

    @Test
    void aLedgerFromBeforeTheIndexesIsQueriedByScanningUntilItsOldEventsAreGone() {
        store.identity(candidate);
        store.append(List.of(push(now, "a", 1), push(now, "b", 2)));
        // As a store written by a fence without ledger indexes left it.
        redis.server().command("DEL", RedisKeys.eventsOfResource("a"), RedisKeys.eventsOfResource("b"));
        redis.server().command("HDEL", RedisKeys.META, "indexedFrom");
        store.append(List.of(push(now, "a", 3)));
        assertEquals(
                ":3",
                redis.server()
                        .command(
                                "EVAL",
                                "return tonumber(redis.call('HGET', KEYS[1], 'indexedFrom'))",
                                "1",
                                RedisKeys.META),
                "indexed from the first event appended with indexes");
        assertEquals(
                List.of(1L, 3L),
                store.query(LedgerQuery.forResource("a")).stream()
                        .map(LedgerEvent::token)
                        .toList());
        assertEquals(1, store.query(LedgerQuery.forResource("b")).size());
    }

    // ---- tokens under load

    @Test
    void tokensStrictlyIncreaseOverAThousandGrantsWithExpiriesBetween() {
        String[] holders = {"alice", "bob", "carol"};
        long last = 0;
        Instant t = now;
        for (int i = 0; i < 1000; i++) {
            String holder = holders[i % holders.length];
            AcquireResult r = store.acquire("hot", holder, 100, t, null, candidate);
            AcquireResult.Granted g = granted(r);
            assertEquals(candidate.nextToken(last, t.toEpochMilli()), g.token(), "after " + last);
            last = g.token();
            switch (i % 4) {
                case 0 -> t = t.plusMillis(100); // let it lapse
                case 1 -> {
                    store.release("hot", holder, g.token(), t.plusMillis(1));
                    t = t.plusMillis(2);
                }
                case 2 -> t = t.plusMillis(150);
                default -> {
                    store.renew("hot", holder, g.token(), 100, t.plusMillis(50));
                    t = t.plusMillis(151);
                }
            }
        }
        List<LedgerEvent> grants =
                store.query(new LedgerQuery("hot", null, null, null, null, Set.of(EventType.GRANT), 0));
        assertEquals(1000, grants.size());
    }

    @Test
    void concurrentAcquirersGetExactlyOneWinnerPerRoundAndNoDuplicateTokens() throws Exception {
        int threads = 8;
        int rounds = 150;
        CyclicBarrier barrier = new CyclicBarrier(threads);
        ConcurrentLinkedQueue<AcquireResult.Granted> grants = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String holder = "agent-" + t;
                futures.add(pool.submit(() -> {
                    for (int round = 0; round < rounds; round++) {
                        barrier.await(10, TimeUnit.SECONDS);
                        // Each round starts after the previous round's lease lapsed.
                        Instant at = now.plusMillis(round * 1000L);
                        AcquireResult r = store.acquire("contended", holder, 1000, at, null, candidate);
                        if (r instanceof AcquireResult.Granted g) {
                            grants.add(g);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(rounds, grants.size());
        Set<Long> tokens = new HashSet<>();
        Set<Instant> roundsWon = new HashSet<>();
        for (AcquireResult.Granted g : grants) {
            assertTrue(tokens.add(g.token()), "duplicate token " + g.token());
            assertTrue(roundsWon.add(g.grantedAt()), "two winners at " + g.grantedAt());
        }
        assertEquals(
                candidate.nextToken(0, now.plusMillis((rounds - 1) * 1000L).toEpochMilli()),
                store.snapshot(List.of("contended")).get("contended").latestGranted());
    }

    // ---- writes the caller stopped waiting for

    /**
     * A write queued behind a stall (another client's slow command, a server busy with a large one) runs
     * once the stall ends, long after its caller timed out and went on as if
     * the store were down. It must then write nothing: a hook that answered "store down" would otherwise
     * find a decision in the ledger that git never saw, and a token state raised for a push it refused.
     */
    @Test
    void aCommitThatReachesTheServerAfterItsCallerGaveUpWritesNothing() throws Exception {
        granted(store.acquire("r", "alice", TTL, now, null, candidate));
        LedgerEvent accept = LedgerEvent.lease(now, EventType.ACCEPT, "r", "alice", 1);
        // A commit first, as a store in use has made: the server knows the script, and runs it when it comes.
        assertEquals(new CommitResult.Committed(), store.commit(List.of(keepingCurrent("r")), List.of(accept)));
        ResourceWrite late = keepingCurrent("r");
        ResourceState before = store.snapshot(List.of("r")).get("r");

        stallThen(() ->
                assertThrows(StoreUnavailableException.class, () -> store.commit(List.of(late), List.of(accept))));

        assertEquals(before, store.snapshot(List.of("r")).get("r"), "the late commit changed the state");
        assertEquals(List.of(EventType.GRANT, EventType.ACCEPT), types(store.query(LedgerQuery.all())));
        // Nothing is wedged: the next read and commit go through.
        assertEquals(new CommitResult.Committed(), store.commit(List.of(keepingCurrent("r")), List.of(accept)));
        assertEquals(
                List.of(EventType.GRANT, EventType.ACCEPT, EventType.ACCEPT), types(store.query(LedgerQuery.all())));
    }

    @Test
    void anAppendThatReachesTheServerAfterItsCallerGaveUpWritesNothing() throws Exception {
        granted(store.acquire("r", "alice", TTL, now, null, candidate));
        LedgerEvent reject = LedgerEvent.lease(now, EventType.REJECT, "r", "mallory", 1);
        store.identityAndSnapshot(List.of("r"), () -> candidate);
        store.append(List.of(reject));

        stallThen(() -> assertThrows(StoreUnavailableException.class, () -> store.append(List.of(reject))));

        assertEquals(List.of(EventType.GRANT, EventType.REJECT), types(store.query(LedgerQuery.all())));
        store.identityAndSnapshot(List.of("r"), () -> candidate);
        store.append(List.of(reject));
        assertEquals(
                List.of(EventType.GRANT, EventType.REJECT, EventType.REJECT), types(store.query(LedgerQuery.all())));
    }

    /** A write of {@code resource} as it is now, read as a hook reads it (identity and state in one step). */
    private ResourceWrite keepingCurrent(String resource) {
        var read = store.identityAndSnapshot(List.of(resource), () -> candidate);
        return ResourceWrite.keeping(
                read.states().get(resource), null, read.identity().generation());
    }

    /**
     * Keeps the server busy for five store timeouts with a script of another client's (a stand-in for
     * any slow command), runs {@code call}, which times out meanwhile, and returns once the server has
     * read and run what the call sent.
     */
    private void stallThen(Runnable call) throws Exception {
        long stallMicros = TimeUnit.MILLISECONDS.toMicros(TIMEOUT.toMillis() * 5);
        String busy = "local function us() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end"
                + " local from = us() while us() - from < tonumber(ARGV[1]) do end return 1";
        Thread stall = new Thread(() -> redis.server().command("EVAL", busy, "0", Long.toString(stallMicros)));
        long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(stallMicros);
        stall.start();
        // Not before the script runs: a call that reached the server first would be answered at once.
        awaitBusy(until);
        call.run();
        assertTrue(System.nanoTime() < until, "the call outlasted the stall: the test proves nothing");
        stall.join();
        Thread.sleep(100);
        redis.server().command("PING");
    }

    /**
     * Returns once the server leaves a {@code PING} unanswered for a while: it is running something long.
     * The server answers that probe later, on a connection closed by then.
     */
    private void awaitBusy(long untilNanos) throws Exception {
        while (true) {
            assertTrue(System.nanoTime() < untilNanos, "the server never got busy: the test proves nothing");
            try (Socket probe = new Socket()) {
                probe.connect(
                        new InetSocketAddress(
                                InetAddress.getLoopbackAddress(), redis.server().port()),
                        1000);
                probe.setSoTimeout(250);
                probe.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                probe.getOutputStream().flush();
                probe.getInputStream().read();
            } catch (SocketTimeoutException busy) {
                return;
            }
            Thread.sleep(5);
        }
    }

    // ---- data loss and outages

    @Test
    void aRestartWithoutPersistenceStartsANewGenerationWithLargerTokens() throws Exception {
        StoreIdentity before = store.identity(candidate);
        AcquireResult.Granted old = granted(store.acquire("r", "alice", TTL, now, null, candidate));

        redis.server().restart();
        Thread.sleep(2); // the new floor is a later millisecond than the old one

        Instant after = Instant.ofEpochMilli(System.currentTimeMillis());
        StoreIdentity fresh = Identities.candidate(after);
        AcquireResult.Granted next = granted(store.acquire("r", "bob", TTL, after, null, fresh));
        assertNotEquals(before.generation(), next.generation());
        assertEquals(fresh.generation(), next.generation());
        assertTrue(next.token() > old.token(), next.token() + " > " + old.token());
        assertNull(next.previous());

        StoreIdentity current = store.identity(Identities.candidate(after.plusSeconds(1)));
        assertEquals(fresh, current);
        assertInstanceOf(LeaseCheck.Refused.class, store.renew("r", "alice", old.token(), TTL, after));
    }

    @Test
    void afterARestartIdentityReportsANewGenerationThatTheNextGrantUses() throws Exception {
        StoreIdentity before = store.identity(candidate);
        AcquireResult.Granted old = granted(store.acquire("r", "alice", TTL, now, null, candidate));

        redis.server().restart();
        Thread.sleep(2);

        Instant after = Instant.ofEpochMilli(System.currentTimeMillis());
        StoreIdentity fresh = Identities.candidate(after);
        StoreIdentity current = store.identity(fresh);
        assertNotEquals(before.generation(), current.generation());
        assertEquals(fresh, current);

        AcquireResult.Granted next =
                granted(store.acquire("r", "alice", TTL, after, null, Identities.candidate(after.plusMillis(1))));
        assertEquals(current.generation(), next.generation());
        assertEquals(current.floor() + 1, next.token());
        assertTrue(next.token() > old.token(), next.token() + " > " + old.token());
    }

    @Test
    void aLostIdentityWithSurvivingStateStillYieldsLargerTokens() {
        store.identity(candidate);
        AcquireResult.Granted old = granted(store.acquire("r", "alice", 1, now, null, candidate));
        redis.server().command("DEL", RedisKeys.META);

        Instant later = now.plusMillis(10);
        StoreIdentity fresh = Identities.candidate(later);
        AcquireResult.Granted next = granted(store.acquire("r", "bob", TTL, later, null, fresh));
        assertEquals(fresh.generation(), next.generation());
        assertEquals(fresh.floor() + 1, next.token());
        assertTrue(next.token() > old.token());
    }

    @Test
    void scriptsAreReloadedAfterAScriptFlush() {
        granted(store.acquire("r", "alice", TTL, now, null, candidate));
        assertEquals("+OK", redis.server().command("SCRIPT", "FLUSH"));
        assertEquals(1, store.snapshot(List.of("r")).get("r").version());
    }

    @Test
    void aStoppedServerFailsFastAndIsUsedAgainWhenItReturns() {
        granted(store.acquire("r", "alice", TTL, now, null, candidate));
        redis.server().stop();

        long start = System.nanoTime();
        StoreUnavailableException e = assertThrows(
                StoreUnavailableException.class, () -> store.acquire("r", "bob", TTL, now, null, candidate));
        assertTrue(elapsed(start).compareTo(TIMEOUT.multipliedBy(3)) < 0, "took " + elapsed(start));
        assertTrue(e.getMessage().contains("127.0.0.1:" + redis.server().port()), e.getMessage());
        assertThrows(StoreUnavailableException.class, () -> store.snapshot(List.of("r")));
        assertThrows(StoreUnavailableException.class, () -> store.query(LedgerQuery.all()));

        redis.server().restart();
        assertInstanceOf(AcquireResult.Granted.class, store.acquire("r", "bob", TTL, now, null, candidate));
    }

    @Test
    void aHungServerTimesOutInsteadOfBlocking() {
        granted(store.acquire("r", "alice", TTL, now, null, candidate));
        redis.server().freeze();
        try {
            long start = System.nanoTime();
            assertThrows(StoreUnavailableException.class, () -> store.renew("r", "alice", 1, TTL, now));
            assertTrue(elapsed(start).compareTo(TIMEOUT.multipliedBy(3)) < 0, "took " + elapsed(start));
        } finally {
            redis.server().thaw();
        }
        assertEquals(1, store.snapshot(List.of("r")).get("r").version());
    }

    @Test
    void waitForReplicasReportsAWriteThatTooFewReplicasAcknowledged() {
        StoreOptions waiting =
                new StoreOptions(TIMEOUT, Duration.ofDays(1), 1, Duration.ofMillis(50)).withCallerClock();
        try (RedisLeaseStore replicated = RedisLeaseStore.open(redis.server().url(), waiting)) {
            StoreUnavailableException e = assertThrows(
                    StoreUnavailableException.class, () -> replicated.acquire("r", "alice", TTL, now, null, candidate));
            assertTrue(e.getMessage().contains("only 0 of 1 replicas"), e.getMessage());
            // Applied on the primary all the same; a busy answer writes nothing and needs no WAIT.
            assertEquals(
                    candidate.floor() + 1,
                    replicated.snapshot(List.of("r")).get("r").latestGranted());
            assertInstanceOf(AcquireResult.Busy.class, replicated.acquire("r", "bob", TTL, now, null, candidate));
        }
    }

    @Test
    void aServerThatMayEvictAnyKeyIsRefused() {
        assertEquals("+OK", redis.server().command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"));
        try (RedisLeaseStore evicting = RedisLeaseStore.open(redis.server().url(), OPTIONS)) {
            ConfigException e = assertThrows(ConfigException.class, () -> evicting.snapshot(List.of("r")));
            assertTrue(e.getMessage().contains("allkeys-lru"), e.getMessage());
        } finally {
            redis.server().command("CONFIG", "SET", "maxmemory-policy", "noeviction");
        }
        assertEquals(ResourceState.empty("r"), store.snapshot(List.of("r")).get("r"));
    }

    @Test
    void credentialsAreUsedAndNeverShown() {
        try (RedisServer guarded = RedisServer.start("--requirepass", "s3cret-pw")) {
            String base = "127.0.0.1:" + guarded.port();
            try (RedisLeaseStore good = RedisLeaseStore.open("redis://:s3cret-pw@" + base + "/2", OPTIONS)) {
                assertEquals("redis://:***@" + base + "/2", good.describe());
                assertInstanceOf(AcquireResult.Granted.class, good.acquire("r", "alice", TTL, now, null, candidate));
            }
            try (RedisLeaseStore otherDb = RedisLeaseStore.open("redis://:s3cret-pw@" + base, OPTIONS)) {
                assertEquals(
                        ResourceState.empty("r"), otherDb.snapshot(List.of("r")).get("r"));
            }
            try (RedisLeaseStore bad = RedisLeaseStore.open("redis://default:wr0ng-pw@" + base, OPTIONS)) {
                ConfigException e = assertThrows(ConfigException.class, () -> bad.snapshot(List.of("r")));
                assertFalse(e.getMessage().contains("wr0ng-pw"), e.getMessage());
                assertTrue(e.getMessage().contains(base), e.getMessage());
            }
            guarded.stop();
            try (RedisLeaseStore down = RedisLeaseStore.open("redis://:s3cret-pw@" + base, OPTIONS)) {
                StoreUnavailableException e =
                        assertThrows(StoreUnavailableException.class, () -> down.snapshot(List.of("r")));
                assertFalse(e.getMessage().contains("s3cret-pw"), e.getMessage());
                assertTrue(e.getMessage().contains(base), e.getMessage());
            }
        }
    }

    @Test
    void theStoresConnectionsNameThemselves() {
        // An operator reading CLIENT LIST can tell fence's connections from others, a hook's as a server's.
        try (RedisLeaseStore single = RedisLeaseStore.open(redis.server().url(), OPTIONS.withSingleConnection(true))) {
            granted(store.acquire("r", "alice", TTL, now, null, candidate));
            single.snapshot(List.of("r"));
            String clients;
            try (Jedis admin = new Jedis("127.0.0.1", redis.server().port())) {
                clients = admin.clientList();
            }
            assertEquals(2, clients.split("name=fence ", -1).length - 1, clients);
        }
    }

    @Test
    void aHooksConnectionThatTheServerRefusesRunsNoCommand() {
        // A hook's single connection is refused at AUTH or SELECT: that call and every later one fail, and no
        // command runs as another user or in another database.
        StoreOptions single = OPTIONS.withSingleConnection(true);
        try (RedisServer guarded = RedisServer.start("--requirepass", "s3cret-pw")) {
            String base = "127.0.0.1:" + guarded.port();
            try (RedisLeaseStore bad = RedisLeaseStore.open("redis://default:wr0ng-pw@" + base, single)) {
                for (int call = 0; call < 2; call++) {
                    ConfigException e = assertThrows(ConfigException.class, () -> bad.snapshot(List.of("r")));
                    assertTrue(e.getMessage().contains("refused fence's credentials"), e.getMessage());
                    assertFalse(e.getMessage().contains("wr0ng-pw"), e.getMessage());
                }
            }
            try (RedisLeaseStore noSuchDb = RedisLeaseStore.open("redis://:s3cret-pw@" + base + "/99", single)) {
                for (int call = 0; call < 2; call++) {
                    assertThrows(
                            RuntimeException.class, () -> noSuchDb.acquire("r", "alice", TTL, now, null, candidate));
                }
            }
            try (RedisLeaseStore db0 = RedisLeaseStore.open("redis://:s3cret-pw@" + base, single)) {
                assertEquals(
                        ResourceState.empty("r"), db0.snapshot(List.of("r")).get("r"), "nothing ran in db 0");
                assertInstanceOf(AcquireResult.Granted.class, db0.acquire("r", "alice", TTL, now, null, candidate));
            }
        }
    }

    @Test
    void tlsToAPlainServerFailsWithinTheTimeout() {
        try (RedisLeaseStore tls =
                RedisLeaseStore.open("rediss://127.0.0.1:" + redis.server().port(), OPTIONS)) {
            assertEquals("rediss://127.0.0.1:" + redis.server().port(), tls.describe());
            long start = System.nanoTime();
            assertThrows(StoreUnavailableException.class, () -> tls.snapshot(List.of("r")));
            assertTrue(elapsed(start).compareTo(TIMEOUT.multipliedBy(3)) < 0, "took " + elapsed(start));
        }
    }

    private static Duration elapsed(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    private static AcquireResult.Granted granted(AcquireResult r) {
        return assertInstanceOf(AcquireResult.Granted.class, r);
    }

    private static List<EventType> types(List<LedgerEvent> events) {
        return events.stream().map(LedgerEvent::type).toList();
    }

    private static List<Long> tokens(List<LedgerEvent> events) {
        return events.stream().map(LedgerEvent::token).toList();
    }

    private static LedgerEvent withoutSeq(LedgerEvent e) {
        return e.withSeq(0);
    }

    @Test
    void aClientWhoseClockIsAYearAheadCannotEraseTheLedgerNorExpireLeases() {
        Instant yearAhead = Instant.now().plus(Duration.ofDays(365));
        try (RedisLeaseStore honest = RedisLeaseStore.open(redis.server().url(), StoreOptions.defaults());
                RedisLeaseStore fast = RedisLeaseStore.open(
                        redis.server().url(),
                        new StoreOptions(TIMEOUT, Duration.ofDays(1), 0, Duration.ofMillis(100)))) {
            Instant real = Instant.now();
            AcquireResult.Granted g =
                    granted(honest.acquire("r", "alice", TTL, real, null, Identities.candidate(real)));
            honest.append(List.of(LedgerEvent.lease(real, EventType.REJECT, "r", "x", 1)));
            // The fast client's events are timed, and the ledger trimmed, by the server, not by its clock.
            fast.append(List.of(LedgerEvent.lease(yearAhead, EventType.LANDED, "r", "x", 2)));
            List<LedgerEvent> all = fast.query(LedgerQuery.all());
            assertEquals(List.of(EventType.GRANT, EventType.REJECT, EventType.LANDED), types(all));
            assertTrue(
                    all.get(2).at().isBefore(real.plus(Duration.ofMinutes(1))),
                    "at " + all.get(2).at());
            // To the fast client alice's lease is long expired; the store's clock says it is live.
            assertInstanceOf(
                    AcquireResult.Busy.class,
                    fast.acquire("r", "bob", TTL, yearAhead, null, Identities.candidate(yearAhead)));
            assertInstanceOf(LeaseCheck.Ok.class, honest.renew("r", "alice", g.token(), TTL, real));
        }
    }

    @Test
    void aLeaseIsLiveOrNotByTheServersClockWhateverTheCallersSays() {
        try (RedisLeaseStore store = RedisLeaseStore.open(redis.server().url(), StoreOptions.defaults())) {
            Clock real = Clock.systemUTC();
            new LeaseService(store, real).acquire("live", "alice", Duration.ofMinutes(2), null);
            for (Duration skew : List.of(Duration.ofDays(365), Duration.ofDays(-365))) {
                var status = new LeaseService(store, Clock.offset(real, skew)).status("live");
                assertNotNull(status.liveLease(), "a client " + skew + " off still sees alice's lease as live");
                assertTrue(
                        Duration.between(Instant.now(), status.at()).abs().compareTo(Duration.ofMinutes(1)) < 0,
                        "read at the server's time: " + status.at());
            }
            Instant server = store.now().orElseThrow();
            assertTrue(
                    Duration.between(Instant.now(), server).abs().compareTo(Duration.ofMinutes(1)) < 0,
                    "TIME: " + server);
        }
    }

    @Test
    void aNewGenerationsFloorIsTheServersClockNotTheFirstCallersClock() {
        Instant hourSlow = Instant.now().minus(Duration.ofHours(1));
        try (RedisLeaseStore slow = RedisLeaseStore.open(redis.empty().url(), StoreOptions.defaults())) {
            long before = Instant.now().toEpochMilli();
            AcquireResult.Granted g =
                    granted(slow.acquire("r", "alice", TTL, hourSlow, null, Identities.candidate(hourSlow)));
            assertTrue(g.token() > before, "token " + g.token() + " is below the server's clock " + before);
            assertTrue(g.grantedAt().toEpochMilli() >= before, "granted at the server's time: " + g.grantedAt());
        }
    }

    @Test
    void aRestartedServerStartsANewGenerationWhateverItKept() {
        try (RedisLeaseStore a = RedisLeaseStore.open(redis.empty().url(), StoreOptions.defaults())) {
            Instant t = Instant.now();
            AcquireResult.Granted g = granted(a.acquire("r", "alice", TTL, t, null, Identities.candidate(t)));
            StoreIdentity before = a.identity(Identities.candidate(t));
            // Everything the store had survives (as from a snapshot or an AOF), but the server is a new run.
            redis.server().restartKeepingData();
            StoreIdentity after = a.identity(Identities.candidate(Instant.now()));
            assertNotEquals(before.generation(), after.generation(), "a restart may have rolled back: new generation");
            assertTrue(after.floor() > g.token(), "the new generation's tokens are above every old one");
            assertInstanceOf(
                    LeaseCheck.Refused.class,
                    a.renew("r", "alice", g.token(), TTL, Instant.now()),
                    "leases of the old generation are void");
            AcquireResult.Granted next =
                    granted(a.acquire("r", "bob", TTL, Instant.now(), null, Identities.candidate(Instant.now())));
            assertTrue(next.token() > g.token());
            assertEquals(after.generation(), next.generation());
        }
    }

    @Test
    void anEvictingPolicySetWhileAProcessRunsIsRefusedOnItsNextCall() {
        try (RedisLeaseStore longRunning = RedisLeaseStore.open(redis.empty().url(), StoreOptions.defaults())) {
            Instant t = Instant.now();
            granted(longRunning.acquire("r", "alice", TTL, t, null, Identities.candidate(t)));
            redis.server().command("CONFIG", "SET", "maxmemory-policy", "allkeys-random");
            try {
                ConfigException e = assertThrows(
                        ConfigException.class,
                        () -> longRunning.acquire("q", "bob", TTL, t, null, Identities.candidate(t)));
                assertTrue(e.getMessage().contains("allkeys-random"), e.getMessage());
                assertThrows(
                        ConfigException.class, () -> longRunning.identityAndSnapshot(List.of("r"), () -> candidate));
            } finally {
                redis.server().command("CONFIG", "SET", "maxmemory-policy", "noeviction");
            }
        }
    }
}
