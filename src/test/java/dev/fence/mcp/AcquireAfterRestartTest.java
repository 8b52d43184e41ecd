package dev.fence.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence mcp --grants DIR} after a restart: the lease_acquire tool takes the holder's live lease again
 * under the grant kept in DIR, as the tools that act under a grant (renew, push_branch) do; a server without
 * the grant still cannot.
 */
class AcquireAfterRestartTest {
    @TempDir
    Path tmp;

    FakeClock clock;
    LeaseStore store;

    @BeforeEach
    void setUp() {
        clock = new FakeClock(Instant.parse("2026-12-01T14:26:10Z"));
        store = Stores.open(
                "sqlite:" + tmp.resolve("store.db"), StoreOptions.defaults().withCallerClock());
    }

    @AfterEach
    void close() {
        store.close();
    }

    private FenceTools server(Path grants) {
        return TestTools.agentA(store, clock, tmp, grants);
    }

    private static long token(ToolResult r) {
        return ((Number) r.structured().get("token")).longValue();
    }

    @Test
    void aRestartedServerTakesItsLiveLeaseAgainUnderTheGrantItKept() {
        Path grants = tmp.resolve("grants");
        FenceTools firstServer = server(grants);
        ToolResult first = firstServer.call("lease_acquire", Map.of("resource", "shared/plan"));
        assertFalse(first.error(), first.text());

        clock.advance(Duration.ofSeconds(5));
        FenceTools restarted = server(grants);
        ToolResult again = restarted.call("lease_acquire", Map.of("resource", "shared/plan"));
        assertFalse(again.error(), again.text());
        assertTrue(token(again) > token(first), again.text());

        // The first server's grant in memory is now an older one: it too takes the lease again under the
        // grant kept in the directory.
        clock.advance(Duration.ofSeconds(5));
        ToolResult third = firstServer.call("lease_acquire", Map.of("resource", "shared/plan"));
        assertFalse(third.error(), third.text());
        assertTrue(token(third) > token(again), third.text());

        // A server that does not keep the grant (another session of the same name, without --grants) cannot.
        ToolResult other = server(null).call("lease_acquire", Map.of("resource", "shared/plan"));
        assertTrue(other.error(), other.text());
        assertEquals("busy", other.structured().get("error"), other.text());
    }
}
