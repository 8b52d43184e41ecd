package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fence serve's warm-up: its verdicts go through the verdict path of a server of its own (and are recorded
 * there, as any verdict is), it stops when the real server does, and a scratch store it cannot use fails it
 * with the store's own problem.
 */
class WarmupTest {
    @TempDir
    Path tmp;

    private static LeaseStore open(String url) {
        return Stores.open(url, StoreOptions.defaults());
    }

    @Test
    void itsVerdictsAreJudgedAndRecordedInTheScratchStore() throws Exception {
        String scratch = "sqlite:" + tmp.resolve("warm-up.db");
        Warmup.Outcome o = Warmup.run(
                scratch, tmp.resolve("credentials"), WarmupTest::open, Clock.systemUTC(), 41, 2, () -> false);

        assertEquals(41, o.verdicts());
        assertFalse(o.stopped());
        try (LeaseStore store = open(scratch)) {
            List<LedgerEvent> events = store.query(LedgerQuery.all());
            assertEquals(
                    2, events.stream().filter(e -> e.type() == EventType.GRANT).count(), events.toString());
            List<LedgerEvent> accepted =
                    events.stream().filter(e -> e.type() == EventType.ACCEPT).toList();
            // Every request was a verdict under its client's lease, judged by the admission rule.
            assertEquals(41, accepted.size(), events.toString());
            assertTrue(
                    accepted.stream().allMatch(e -> e.token() > 0 && "warm-up".equals(e.pusher())),
                    accepted.toString());
        }
        assertTrue(Files.readString(tmp.resolve("credentials")).contains("warm-up"), "its own hook credential");
    }

    @Test
    void itStopsWhenTheServerStops() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        Warmup.Outcome o = Warmup.run(
                "sqlite:" + tmp.resolve("warm-up.db"),
                tmp.resolve("credentials"),
                WarmupTest::open,
                Clock.systemUTC(),
                100_000,
                2,
                () -> asked.incrementAndGet() > 10);

        assertTrue(o.stopped());
        assertTrue(o.verdicts() <= 10, "answered " + o.verdicts());
    }

    @Test
    void aScratchStoreItCannotUseFailsIt() throws Exception {
        Path notADirectory = Files.writeString(tmp.resolve("file"), "x");
        RuntimeException e = assertThrows(
                RuntimeException.class,
                () -> Warmup.run(
                        "sqlite:" + notADirectory.resolve("warm-up.db"),
                        tmp.resolve("credentials"),
                        WarmupTest::open,
                        Clock.systemUTC(),
                        10,
                        1,
                        () -> false));
        assertTrue(e.getMessage().contains(notADirectory.toString()), e.getMessage());
    }
}
